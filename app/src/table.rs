//! Plain-text tables for the CLI's listings (`march ls`, `march status`): a header row and
//! columns padded to their widest cell, two spaces apart.

/// The table of `head` and `rows` (each as long as `head`), one line each.
pub fn render(head: &[&str], rows: &[Vec<String>]) -> String {
    let widths: Vec<usize> = (0..head.len())
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|cell| cell.chars().count())
                .chain([head[c].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: Vec<&str>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect();
        let mut text = padded.join("  ").trim_end().to_string();
        text.push('\n');
        text
    };
    let mut out = line(head.to_vec());
    for row in rows {
        out.push_str(&line(row.iter().map(String::as_str).collect()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_as_wide_as_their_widest_cell() {
        let rows = vec![
            vec!["api".to_string(), "/src/api".to_string(), "1".to_string()],
            vec!["web-2".to_string(), "/w".to_string(), "".to_string()],
        ];
        assert_eq!(
            render(&["NAME", "DIR", "N"], &rows),
            "NAME   DIR       N\napi    /src/api  1\nweb-2  /w\n"
        );
    }
}
