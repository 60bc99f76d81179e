//! The layout of one tab: a tree of splits whose leaves are panes, with zoom.
//!
//! Rectangles are computed from the tree for a given area; focus moves by direction using
//! those rectangles (the nearest pane whose edge touches the focused one's, preferring the
//! one that overlaps it most), as tmux and zellij do.

mod preset;

use ratatui::layout::Rect;
use serde::{Deserialize, Serialize};

pub use preset::Preset;

/// A pane's id, unique in the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct PaneId(pub u64);

/// How a split divides its area.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Axis {
    /// Children side by side, left to right.
    Horizontal,
    /// Children stacked, top to bottom.
    Vertical,
}

/// A direction to move focus, grow a pane or split.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Towards smaller x.
    Left,
    /// Towards larger x.
    Right,
    /// Towards smaller y.
    Up,
    /// Towards larger y.
    Down,
}

impl Direction {
    fn axis(self) -> Axis {
        match self {
            Direction::Left | Direction::Right => Axis::Horizontal,
            Direction::Up | Direction::Down => Axis::Vertical,
        }
    }
}

/// Smallest share a child keeps when neighbours grow (in weight units of 1000).
const MIN_WEIGHT: u32 = 100;
/// How much one grow step moves (in weight units).
const GROW_STEP: u32 = 50;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum Node {
    Leaf(PaneId),
    Split {
        axis: Axis,
        /// Children with their weights; weights of one split sum to about 1000 per child.
        children: Vec<(Node, u32)>,
    },
}

impl Node {
    fn contains(&self, id: PaneId) -> bool {
        match self {
            Node::Leaf(p) => *p == id,
            Node::Split { children, .. } => children.iter().any(|(c, _)| c.contains(id)),
        }
    }

    fn leaves(&self, out: &mut Vec<PaneId>) {
        match self {
            Node::Leaf(p) => out.push(*p),
            Node::Split { children, .. } => children.iter().for_each(|(c, _)| c.leaves(out)),
        }
    }

    fn rects(&self, area: Rect, out: &mut Vec<(PaneId, Rect)>) {
        match self {
            Node::Leaf(p) => out.push((*p, area)),
            Node::Split { axis, children } => {
                for ((child, _), rect) in children.iter().zip(divide(area, *axis, children)) {
                    child.rects(rect, out);
                }
            }
        }
    }

    /// Replace the leaf `id` by what `f` makes of it; whether it was found.
    fn replace_leaf(&mut self, id: PaneId, f: &mut dyn FnMut(PaneId) -> Node) -> bool {
        match self {
            Node::Leaf(p) if *p == id => {
                *self = f(id);
                true
            }
            Node::Leaf(_) => false,
            Node::Split { children, .. } => children
                .iter_mut()
                .any(|(child, _)| child.replace_leaf(id, f)),
        }
    }

    /// Remove the leaf `id`; a split left with one child is replaced by it.
    fn remove(&mut self, id: PaneId) -> bool {
        let Node::Split { children, .. } = self else {
            return false;
        };
        if let Some(i) = children
            .iter()
            .position(|(c, _)| matches!(c, Node::Leaf(p) if *p == id))
        {
            let (_, weight) = children.remove(i);
            // The neighbours share the freed space.
            if let Some(share) = weight.checked_div(children.len() as u32) {
                for (_, w) in children.iter_mut() {
                    *w += share;
                }
            }
        } else if !children.iter_mut().any(|(c, _)| c.remove(id)) {
            return false;
        }
        if children.len() == 1
            && let Some((only, _)) = children.pop()
        {
            *self = only;
        }
        true
    }

    /// Grow `id` along `axis` by taking weight from the next (or previous) sibling in the
    /// innermost split of that axis holding it. Whether anything changed.
    fn grow(&mut self, id: PaneId, dir: Direction) -> bool {
        let Node::Split { axis, children } = self else {
            return false;
        };
        let Some(i) = children.iter().position(|(c, _)| c.contains(id)) else {
            return false;
        };
        // Deeper splits first: the innermost one of the right axis moves.
        if children[i].0.grow(id, dir) {
            return true;
        }
        if *axis != dir.axis() {
            return false;
        }
        let neighbour = match dir {
            Direction::Right | Direction::Down => i + 1,
            Direction::Left | Direction::Up => match i.checked_sub(1) {
                Some(j) => j,
                None => return false,
            },
        };
        if neighbour >= children.len() || children[neighbour].1 < MIN_WEIGHT + GROW_STEP {
            return false;
        }
        children[neighbour].1 -= GROW_STEP;
        children[i].1 += GROW_STEP;
        true
    }
}

/// Split `area` along `axis` in proportion to the children's weights; the last child takes
/// the rounding rest so the rectangles tile the area exactly.
fn divide(area: Rect, axis: Axis, children: &[(Node, u32)]) -> Vec<Rect> {
    let total: u64 = children
        .iter()
        .map(|(_, w)| u64::from(*w))
        .sum::<u64>()
        .max(1);
    let length = match axis {
        Axis::Horizontal => area.width,
        Axis::Vertical => area.height,
    };
    let mut out = Vec::with_capacity(children.len());
    let mut used: u16 = 0;
    let mut acc: u64 = 0;
    for (i, (_, w)) in children.iter().enumerate() {
        acc += u64::from(*w);
        let end = if i + 1 == children.len() {
            length
        } else {
            u16::try_from(u64::from(length) * acc / total).unwrap_or(length)
        };
        let size = end.saturating_sub(used);
        out.push(match axis {
            Axis::Horizontal => Rect::new(area.x + used, area.y, size, area.height),
            Axis::Vertical => Rect::new(area.x, area.y + used, area.width, size),
        });
        used = end;
    }
    out
}

/// The layout of one tab.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Layout {
    root: Node,
    focused: PaneId,
    zoomed: bool,
    /// The preset last applied: what `layout.next` goes on from, as tmux's `next-layout`.
    #[serde(default)]
    preset: Option<Preset>,
}

impl Layout {
    /// A layout holding one pane.
    pub fn new(pane: PaneId) -> Self {
        Layout {
            root: Node::Leaf(pane),
            focused: pane,
            zoomed: false,
            preset: None,
        }
    }

    /// The focused pane.
    pub fn focused(&self) -> PaneId {
        self.focused
    }

    /// Whether the focused pane fills the tab.
    pub fn is_zoomed(&self) -> bool {
        self.zoomed
    }

    /// Every pane, in reading order (left to right, top to bottom within splits).
    pub fn panes(&self) -> Vec<PaneId> {
        let mut out = Vec::new();
        self.root.leaves(&mut out);
        out
    }

    /// Whether `pane` is in this layout.
    pub fn contains(&self, pane: PaneId) -> bool {
        self.root.contains(pane)
    }

    /// Where each visible pane goes in `area` (only the focused one when zoomed).
    pub fn rects(&self, area: Rect) -> Vec<(PaneId, Rect)> {
        if self.zoomed {
            return vec![(self.focused, area)];
        }
        let mut out = Vec::new();
        self.root.rects(area, &mut out);
        out
    }

    /// Split the focused pane: `new` goes after it along `axis` and takes focus; the two
    /// share the old pane's space equally. Unzooms.
    pub fn split(&mut self, axis: Axis, new: PaneId) {
        self.zoomed = false;
        let focused = self.focused;
        // Inside a split of the same axis, the new pane becomes a sibling rather than a
        // nested split, so repeated splits make even columns as in tmux's `select-layout`.
        if !Self::insert_sibling(&mut self.root, focused, axis, new) {
            self.root.replace_leaf(focused, &mut |old| Node::Split {
                axis,
                children: vec![(Node::Leaf(old), 1000), (Node::Leaf(new), 1000)],
            });
        }
        self.focused = new;
    }

    fn insert_sibling(node: &mut Node, target: PaneId, axis: Axis, new: PaneId) -> bool {
        let Node::Split {
            axis: own,
            children,
        } = node
        else {
            return false;
        };
        if let Some(i) = children
            .iter()
            .position(|(c, _)| matches!(c, Node::Leaf(p) if *p == target))
        {
            if *own != axis {
                return false;
            }
            let half = children[i].1 / 2;
            children[i].1 -= half;
            children.insert(i + 1, (Node::Leaf(new), half.max(MIN_WEIGHT)));
            return true;
        }
        children
            .iter_mut()
            .any(|(c, _)| Self::insert_sibling(c, target, axis, new))
    }

    /// Put `new` in `old`'s place, same size, focused if `old` was; whether `old` was here.
    pub fn replace_pane(&mut self, old: PaneId, new: PaneId) -> bool {
        if !self.root.replace_leaf(old, &mut |_| Node::Leaf(new)) {
            return false;
        }
        if self.focused == old {
            self.focused = new;
        }
        true
    }

    /// Remove `pane`. Returns false when it is the last pane (a tab always has one) or not
    /// here. Focus moves to the pane now in its place.
    pub fn remove(&mut self, pane: PaneId, area: Rect) -> bool {
        if matches!(self.root, Node::Leaf(_)) || !self.root.contains(pane) {
            return false;
        }
        let before = self.rects_unzoomed(area);
        let old_rect = before.iter().find(|(p, _)| *p == pane).map(|(_, r)| *r);
        self.root.remove(pane);
        if self.focused == pane {
            self.zoomed = false;
            // The pane that now covers the middle of the closed one, else the first.
            let after = self.rects_unzoomed(area);
            self.focused = old_rect
                .and_then(|r| {
                    let (cx, cy) = (r.x + r.width / 2, r.y + r.height / 2);
                    after
                        .iter()
                        .find(|(_, a)| a.contains(ratatui::layout::Position::new(cx, cy)))
                        .map(|(p, _)| *p)
                })
                .or_else(|| after.first().map(|(p, _)| *p))
                .unwrap_or(self.focused);
        }
        true
    }

    fn rects_unzoomed(&self, area: Rect) -> Vec<(PaneId, Rect)> {
        let mut out = Vec::new();
        self.root.rects(area, &mut out);
        out
    }

    /// Focus `pane` if it is here.
    pub fn focus(&mut self, pane: PaneId) -> bool {
        if !self.contains(pane) {
            return false;
        }
        if pane != self.focused {
            self.zoomed = false;
        }
        self.focused = pane;
        true
    }

    /// Focus the neighbour in `dir` within `area`: among panes whose facing edge touches the
    /// focused pane's, the one overlapping it most (ties: the upper or left one).
    pub fn focus_direction(&mut self, dir: Direction, area: Rect) -> bool {
        let rects = self.rects_unzoomed(area);
        let Some(&(_, from)) = rects.iter().find(|(p, _)| *p == self.focused) else {
            return false;
        };
        let overlap = |a0: u16, a1: u16, b0: u16, b1: u16| a1.min(b1).saturating_sub(a0.max(b0));
        let best = rects
            .iter()
            .filter(|(p, _)| *p != self.focused)
            .filter_map(|(p, r)| {
                let touches = match dir {
                    Direction::Left => r.right() == from.x,
                    Direction::Right => r.x == from.right(),
                    Direction::Up => r.bottom() == from.y,
                    Direction::Down => r.y == from.bottom(),
                };
                let shared = match dir.axis() {
                    Axis::Horizontal => overlap(r.y, r.bottom(), from.y, from.bottom()),
                    Axis::Vertical => overlap(r.x, r.right(), from.x, from.right()),
                };
                (touches && shared > 0).then_some((shared, std::cmp::Reverse((r.y, r.x)), *p))
            })
            .max();
        match best {
            Some((_, _, pane)) => self.focus(pane),
            None => false,
        }
    }

    /// Focus the next (`forward`) or previous pane in reading order, wrapping around.
    pub fn focus_cycle(&mut self, forward: bool) -> bool {
        let panes = self.panes();
        let Some(i) = panes.iter().position(|p| *p == self.focused) else {
            return false;
        };
        let n = panes.len();
        if n < 2 {
            return false;
        }
        let next = if forward {
            (i + 1) % n
        } else {
            (i + n - 1) % n
        };
        self.focus(panes[next])
    }

    /// Swap the focused pane with the next or previous one in reading order; focus follows.
    pub fn swap(&mut self, forward: bool) -> bool {
        let panes = self.panes();
        let Some(i) = panes.iter().position(|p| *p == self.focused) else {
            return false;
        };
        let n = panes.len();
        if n < 2 {
            return false;
        }
        let other = panes[if forward {
            (i + 1) % n
        } else {
            (i + n - 1) % n
        }];
        let a = self.focused;
        // Through a placeholder id no pane has, so the two replacements do not collide.
        let temp = PaneId(u64::MAX);
        self.root.replace_leaf(a, &mut |_| Node::Leaf(temp));
        self.root.replace_leaf(other, &mut |_| Node::Leaf(a));
        self.root.replace_leaf(temp, &mut |_| Node::Leaf(other));
        true
    }

    /// Grow the focused pane towards `dir` by one step.
    pub fn grow(&mut self, dir: Direction) -> bool {
        self.root.grow(self.focused, dir)
    }

    /// Toggle zoom of the focused pane (only with more than one pane).
    pub fn toggle_zoom(&mut self) {
        self.zoomed = !self.zoomed && self.panes().len() > 1;
    }

    /// Move the border between two panes to column or row `to` (mouse drag): the border is
    /// the one at `at` (a cell on a pane's right or bottom edge). Whether one moved.
    pub fn drag_border(&mut self, area: Rect, at: (u16, u16), to: (u16, u16)) -> bool {
        Self::drag(&mut self.root, area, at, to)
    }

    fn drag(node: &mut Node, area: Rect, at: (u16, u16), to: (u16, u16)) -> bool {
        let Node::Split { axis, children } = node else {
            return false;
        };
        let rects = divide(area, *axis, children);
        for i in 0..children.len() {
            let r = rects[i];
            let on_border = match axis {
                Axis::Horizontal => {
                    i + 1 < children.len()
                        && at.0 + 1 == r.right()
                        && at.1 >= r.y
                        && at.1 < r.bottom()
                }
                Axis::Vertical => {
                    i + 1 < children.len()
                        && at.1 + 1 == r.bottom()
                        && at.0 >= r.x
                        && at.0 < r.right()
                }
            };
            if on_border {
                let next = rects[i + 1];
                let (start, end, pos) = match axis {
                    Axis::Horizontal => (r.x, next.right(), to.0 + 1),
                    Axis::Vertical => (r.y, next.bottom(), to.1 + 1),
                };
                let span = u32::from(end.saturating_sub(start)).max(1);
                let pair = children[i].1 + children[i + 1].1;
                let first = u32::from(
                    pos.clamp(start + 2, end.saturating_sub(2))
                        .saturating_sub(start),
                );
                let w = (pair * first / span).clamp(MIN_WEIGHT, pair.saturating_sub(MIN_WEIGHT));
                children[i].1 = w;
                children[i + 1].1 = pair - w;
                return true;
            }
            if r.contains(ratatui::layout::Position::new(at.0, at.1))
                && Self::drag(&mut children[i].0, r, at, to)
            {
                return true;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const AREA: Rect = Rect {
        x: 0,
        y: 0,
        width: 100,
        height: 40,
    };

    fn p(n: u64) -> PaneId {
        PaneId(n)
    }

    fn rect_of(l: &Layout, pane: u64) -> Rect {
        l.rects(AREA)
            .into_iter()
            .find(|(id, _)| *id == p(pane))
            .map(|(_, r)| r)
            .unwrap()
    }

    #[test]
    fn splits_tile_the_area_and_repeat_evenly() {
        let mut l = Layout::new(p(1));
        l.split(Axis::Horizontal, p(2));
        l.split(Axis::Horizontal, p(3));
        assert_eq!(l.panes(), vec![p(1), p(2), p(3)]);
        assert_eq!(l.focused(), p(3));
        let rects = l.rects(AREA);
        let widths: Vec<u16> = rects.iter().map(|(_, r)| r.width).collect();
        assert_eq!(widths.iter().sum::<u16>(), 100);
        // The second split halves pane 2, as in tmux: 50 / 25 / 25.
        assert_eq!(widths, vec![50, 25, 25]);
        l.split(Axis::Vertical, p(4));
        assert_eq!(rect_of(&l, 3).height + rect_of(&l, 4).height, 40);
        assert_eq!(rect_of(&l, 4).y, rect_of(&l, 3).bottom());
    }

    #[test]
    fn focus_moves_by_direction_to_the_most_overlapping_neighbour() {
        // 1 | 2
        //   | 3
        let mut l = Layout::new(p(1));
        l.split(Axis::Horizontal, p(2));
        l.split(Axis::Vertical, p(3));
        assert!(l.focus_direction(Direction::Left, AREA));
        assert_eq!(l.focused(), p(1));
        // From 1 to the right: 2 and 3 overlap equally; the upper one wins.
        assert!(l.focus_direction(Direction::Right, AREA));
        assert_eq!(l.focused(), p(2));
        assert!(l.focus_direction(Direction::Down, AREA));
        assert_eq!(l.focused(), p(3));
        assert!(!l.focus_direction(Direction::Down, AREA));
        assert!(l.focus_cycle(true));
        assert_eq!(l.focused(), p(1));
        assert!(l.focus_cycle(false));
        assert_eq!(l.focused(), p(3));
    }

    #[test]
    fn closing_gives_the_space_back_and_focus_to_the_pane_in_its_place() {
        let mut l = Layout::new(p(1));
        l.split(Axis::Horizontal, p(2));
        l.split(Axis::Vertical, p(3));
        assert!(l.remove(p(3), AREA));
        assert_eq!(l.focused(), p(2));
        assert_eq!(rect_of(&l, 2).height, 40);
        assert!(l.remove(p(1), AREA));
        assert_eq!(l.panes(), vec![p(2)]);
        assert_eq!(rect_of(&l, 2), AREA);
        assert!(!l.remove(p(2), AREA), "the last pane stays");
    }

    #[test]
    fn zoom_swap_and_grow() {
        let mut l = Layout::new(p(1));
        l.toggle_zoom();
        assert!(!l.is_zoomed(), "a single pane does not zoom");
        l.split(Axis::Horizontal, p(2));
        l.toggle_zoom();
        assert_eq!(l.rects(AREA), vec![(p(2), AREA)]);
        l.focus(p(1));
        assert!(!l.is_zoomed(), "focusing another pane unzooms");
        assert!(l.swap(true));
        assert_eq!(l.panes(), vec![p(2), p(1)]);
        assert_eq!(l.focused(), p(1));
        let before = rect_of(&l, 1).width;
        assert!(l.grow(Direction::Left));
        assert!(rect_of(&l, 1).width > before);
        assert!(!l.grow(Direction::Right), "nothing to the right");
        assert!(!l.grow(Direction::Up), "no vertical split");
        for _ in 0..100 {
            l.grow(Direction::Left);
        }
        assert!(rect_of(&l, 2).width >= 4, "a neighbour keeps a minimum");
    }

    #[test]
    fn dragging_a_border_resizes_its_two_panes() {
        let mut l = Layout::new(p(1));
        l.split(Axis::Horizontal, p(2));
        let border = rect_of(&l, 1).right() - 1;
        assert!(l.drag_border(AREA, (border, 5), (29, 5)));
        assert_eq!(rect_of(&l, 1).width, 30);
        assert_eq!(rect_of(&l, 2).width, 70);
        assert!(!l.drag_border(AREA, (10, 5), (20, 5)), "not on a border");
    }

    #[test]
    fn replacing_a_pane_keeps_every_size() {
        let mut l = Layout::new(p(1));
        l.split(Axis::Horizontal, p(2));
        l.split(Axis::Horizontal, p(3));
        let before: Vec<Rect> = l.rects(AREA).into_iter().map(|(_, r)| r).collect();
        assert!(l.replace_pane(p(2), p(9)));
        let after: Vec<(PaneId, Rect)> = l.rects(AREA);
        assert_eq!(after.iter().map(|(_, r)| *r).collect::<Vec<_>>(), before);
        assert_eq!(after[1].0, p(9));
        assert_eq!(l.focused(), p(3));
        assert!(l.replace_pane(p(3), p(8)));
        assert_eq!(l.focused(), p(8));
        assert!(!l.replace_pane(p(42), p(7)));
    }

    #[test]
    fn tiny_areas_never_panic() {
        let mut l = Layout::new(p(1));
        for n in 2..8 {
            l.split(
                if n % 2 == 0 {
                    Axis::Horizontal
                } else {
                    Axis::Vertical
                },
                p(n),
            );
        }
        for area in [
            Rect::new(0, 0, 1, 1),
            Rect::new(0, 0, 0, 0),
            Rect::new(3, 3, 2, 9),
        ] {
            let rects = l.rects(area);
            assert_eq!(rects.len(), 7);
            for (_, r) in rects {
                assert!(r.right() <= area.right() && r.bottom() <= area.bottom());
            }
            l.focus_direction(Direction::Right, area);
            l.drag_border(area, (0, 0), (1, 1));
        }
    }
}
