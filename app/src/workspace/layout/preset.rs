//! tmux's preset layouts: every pane of a tab laid out again in one of five arrangements,
//! in reading order, the focused pane being the main one where a preset has one.

use serde::{Deserialize, Serialize};

use super::{Axis, Layout, Node, PaneId};

/// The main pane's share in the main-* presets (the others share the rest): 60 %.
const MAIN_WEIGHT: u32 = 1500;
const EVEN_WEIGHT: u32 = 1000;

/// A preset layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    /// Side by side, equal widths.
    EvenHorizontal,
    /// Stacked, equal heights.
    EvenVertical,
    /// The main pane on top across the width, the others side by side below.
    MainHorizontal,
    /// The main pane on the left across the height, the others stacked on the right.
    MainVertical,
    /// As close to a square grid as the count allows, rows filled first.
    Tiled,
}

impl Preset {
    /// Every preset, in the order `layout.next` cycles through them (tmux's).
    pub const ALL: [Preset; 5] = [
        Preset::EvenHorizontal,
        Preset::EvenVertical,
        Preset::MainHorizontal,
        Preset::MainVertical,
        Preset::Tiled,
    ];

    /// Its tmux name.
    pub fn name(self) -> &'static str {
        match self {
            Preset::EvenHorizontal => "even-horizontal",
            Preset::EvenVertical => "even-vertical",
            Preset::MainHorizontal => "main-horizontal",
            Preset::MainVertical => "main-vertical",
            Preset::Tiled => "tiled",
        }
    }

    /// The one after this in the cycle.
    pub fn next(self) -> Preset {
        let i = Self::ALL.iter().position(|p| *p == self).unwrap_or(0);
        Self::ALL[(i + 1) % Self::ALL.len()]
    }

    /// The tree for `panes` (in reading order) with `main` as the main pane.
    fn tree(self, panes: &[PaneId], main: PaneId) -> Node {
        let even = |axis, panes: &[PaneId]| split(axis, panes.iter().map(|p| Node::Leaf(*p)));
        let others: Vec<PaneId> = panes.iter().copied().filter(|p| *p != main).collect();
        match self {
            _ if panes.len() < 2 => Node::Leaf(panes.first().copied().unwrap_or(main)),
            Preset::EvenHorizontal => even(Axis::Horizontal, panes),
            Preset::EvenVertical => even(Axis::Vertical, panes),
            Preset::MainHorizontal | Preset::MainVertical => {
                let (outer, inner) = if self == Preset::MainHorizontal {
                    (Axis::Vertical, Axis::Horizontal)
                } else {
                    (Axis::Horizontal, Axis::Vertical)
                };
                Node::Split {
                    axis: outer,
                    children: vec![
                        (Node::Leaf(main), MAIN_WEIGHT),
                        (even(inner, &others), EVEN_WEIGHT),
                    ],
                }
            }
            Preset::Tiled => {
                let columns = (1..=panes.len())
                    .find(|c| c * c >= panes.len())
                    .unwrap_or(1);
                let rows = panes.chunks(columns).map(|row| even(Axis::Horizontal, row));
                split(Axis::Vertical, rows)
            }
        }
    }
}

impl std::str::FromStr for Preset {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| format!("unknown layout `{s}`"))
    }
}

/// `nodes` in one split along `axis` with equal weights; one node stands alone.
fn split(axis: Axis, nodes: impl Iterator<Item = Node>) -> Node {
    let mut children: Vec<(Node, u32)> = nodes.map(|n| (n, EVEN_WEIGHT)).collect();
    if children.len() == 1
        && let Some((only, _)) = children.pop()
    {
        return only;
    }
    Node::Split { axis, children }
}

impl Layout {
    /// Lays every pane out again as `preset` (unzooms; focus stays).
    pub fn apply_preset(&mut self, preset: Preset) {
        let panes = self.panes();
        self.root = preset.tree(&panes, self.focused);
        self.zoomed = false;
        self.preset = Some(preset);
    }

    /// Applies the preset after the last one applied (the first when none was); returns it.
    pub fn next_preset(&mut self) -> Preset {
        let preset = self.preset.map_or(Preset::ALL[0], Preset::next);
        self.apply_preset(preset);
        preset
    }
}

#[cfg(test)]
mod tests {
    use ratatui::layout::Rect;

    use super::*;

    const AREA: Rect = Rect::new(0, 0, 120, 40);

    /// Five panes made by splitting again and again (the uneven layout presets fix).
    fn five() -> Layout {
        let mut l = Layout::new(PaneId(1));
        for n in 2..=5 {
            l.split(Axis::Horizontal, PaneId(n));
        }
        l.focus(PaneId(3));
        l
    }

    /// The layout drawn as boxes of digits, one per pane, for snapshots.
    fn picture(l: &Layout, area: Rect) -> String {
        let mut grid = vec![vec![' '; usize::from(area.width)]; usize::from(area.height)];
        for (id, r) in l.rects(area) {
            let mark = char::from_digit(u32::try_from(id.0 % 10).unwrap_or(0), 10).unwrap_or('?');
            for y in r.y..r.bottom() {
                for x in r.x..r.right() {
                    let edge = x == r.x || y == r.y || x + 1 == r.right() || y + 1 == r.bottom();
                    grid[usize::from(y)][usize::from(x)] = if edge { '·' } else { mark };
                }
            }
        }
        grid.into_iter()
            .map(|row| row.into_iter().collect::<String>())
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn repeated_splits_are_uneven_until_a_preset_evens_them() {
        let l = five();
        let widths: Vec<u16> = l.rects(AREA).iter().map(|(_, r)| r.width).collect();
        assert_eq!(widths, vec![60, 30, 15, 7, 8]);
        let mut even = l.clone();
        even.apply_preset(Preset::EvenHorizontal);
        let widths: Vec<u16> = even.rects(AREA).iter().map(|(_, r)| r.width).collect();
        assert_eq!(widths, vec![24, 24, 24, 24, 24]);
        assert_eq!(even.focused(), PaneId(3));
    }

    #[test]
    fn each_preset_on_five_panes() {
        let small = Rect::new(0, 0, 40, 20);
        for preset in Preset::ALL {
            let mut l = five();
            l.apply_preset(preset);
            assert_eq!(l.panes().len(), 5, "{}", preset.name());
            // The panes tile the area.
            let area: u32 = l.rects(AREA).iter().map(|(_, r)| r.area()).sum();
            assert_eq!(area, AREA.area(), "{}", preset.name());
            insta::assert_snapshot!(preset.name(), picture(&l, small));
        }
    }

    #[test]
    fn main_presets_give_the_focused_pane_the_larger_share() {
        let mut l = five();
        l.apply_preset(Preset::MainVertical);
        let rects = l.rects(AREA);
        let main = rects.iter().find(|(p, _)| *p == PaneId(3)).unwrap().1;
        assert_eq!((main.x, main.width, main.height), (0, 72, 40));
        l.apply_preset(Preset::MainHorizontal);
        let main = l
            .rects(AREA)
            .into_iter()
            .find(|(p, _)| *p == PaneId(3))
            .unwrap()
            .1;
        assert_eq!((main.y, main.width, main.height), (0, 120, 24));
    }

    #[test]
    fn next_cycles_in_tmux_order_and_a_single_pane_stays_whole() {
        let mut l = five();
        let order: Vec<Preset> = (0..6).map(|_| l.next_preset()).collect();
        assert_eq!(
            order,
            [
                Preset::EvenHorizontal,
                Preset::EvenVertical,
                Preset::MainHorizontal,
                Preset::MainVertical,
                Preset::Tiled,
                Preset::EvenHorizontal
            ]
        );
        let mut one = Layout::new(PaneId(1));
        for preset in Preset::ALL {
            one.apply_preset(preset);
            assert_eq!(one.rects(AREA), vec![(PaneId(1), AREA)]);
        }
        assert_eq!("tiled".parse::<Preset>(), Ok(Preset::Tiled));
        assert!("diagonal".parse::<Preset>().is_err());
    }

    #[test]
    fn closing_a_pane_after_a_preset_shares_its_space_among_its_row() {
        let mut l = five();
        l.apply_preset(Preset::Tiled);
        assert!(l.remove(PaneId(2), AREA));
        insta::assert_snapshot!(picture(&l, Rect::new(0, 0, 40, 12)));
        l.apply_preset(Preset::EvenHorizontal);
        let widths: Vec<u16> = l.rects(AREA).iter().map(|(_, r)| r.width).collect();
        assert_eq!(widths, vec![30, 30, 30, 30]);
    }
}
