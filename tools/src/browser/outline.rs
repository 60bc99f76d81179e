//! A page's accessibility tree as an indented outline a model can act on: each element's
//! role and name, and `[ref=N]` (its backend node id) to click or type into it.

use std::collections::HashMap;

use chromiumoxide::cdp::browser_protocol::accessibility::{AxNode, AxValue};

/// Roles that only group: their children are shown in their place.
const LAYOUT_ROLES: [&str; 6] = [
    "generic",
    "none",
    "presentation",
    "InlineTextBox",
    "LineBreak",
    "RootWebArea",
];

/// At most this many lines; a longer outline says how many were left out.
const MAX_LINES: usize = 2000;

fn text_of(value: &Option<AxValue>) -> String {
    let Some(value) = value.as_ref().and_then(|v| v.value.as_ref()) else {
        return String::new();
    };
    let text = match value {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The outline of `nodes` (Chromium's full tree, in any order).
pub fn outline(nodes: &[AxNode]) -> String {
    let by_id: HashMap<&str, &AxNode> = nodes
        .iter()
        .map(|n| (n.node_id.inner().as_str(), n))
        .collect();
    let roots = nodes.iter().filter(|n| {
        n.parent_id
            .as_ref()
            .is_none_or(|p| !by_id.contains_key(p.inner().as_str()))
    });
    let mut lines = Vec::new();
    let mut left_out = 0usize;
    let mut stack: Vec<(&AxNode, usize)> = roots.map(|n| (n, 0)).collect();
    stack.reverse();
    while let Some((node, depth)) = stack.pop() {
        let role = text_of(&node.role);
        let name = text_of(&node.name);
        let shown = !node.ignored && !LAYOUT_ROLES.contains(&role.as_str());
        // Text already in its parent's name (a link's or a button's) is not repeated.
        let repeated = role == "StaticText"
            && node
                .parent_id
                .as_ref()
                .and_then(|p| by_id.get(p.inner().as_str()))
                .is_some_and(|p| text_of(&p.name) == name);
        let mut child_depth = depth;
        if shown && !repeated && !(role == "StaticText" && name.is_empty()) {
            if lines.len() >= MAX_LINES {
                left_out += 1;
            } else {
                lines.push(line(node, &role, &name, depth));
            }
            child_depth = depth + 1;
        }
        if let Some(children) = &node.child_ids {
            for child in children.iter().rev() {
                if let Some(child) = by_id.get(child.inner().as_str()) {
                    stack.push((child, child_depth));
                }
            }
        }
    }
    let mut text = lines.join("\n");
    if left_out > 0 {
        text.push_str(&format!("\n[{left_out} more elements left out]"));
    }
    text
}

fn line(node: &AxNode, role: &str, name: &str, depth: usize) -> String {
    let indent = "  ".repeat(depth);
    if role == "StaticText" {
        return format!("{indent}- text: {name}");
    }
    let mut line = format!("{indent}- {role}");
    if !name.is_empty() {
        line.push_str(&format!(" \"{}\"", name.replace('"', "\\\"")));
    }
    let value = text_of(&node.value);
    if !value.is_empty() {
        line.push_str(&format!(" value=\"{}\"", value.replace('"', "\\\"")));
    }
    if let Some(id) = &node.backend_dom_node_id {
        line.push_str(&format!(" [ref={}]", id.inner()));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(id: &str, parent: Option<&str>, role: &str, name: &str, children: &[&str]) -> AxNode {
        serde_json::from_value(serde_json::json!({
            "nodeId": id,
            "ignored": false,
            "role": {"type": "role", "value": role},
            "name": {"type": "computedString", "value": name},
            "parentId": parent,
            "childIds": children,
            "backendDOMNodeId": id.parse::<i64>().unwrap() + 100,
        }))
        .unwrap()
    }

    #[test]
    fn roles_names_and_refs_nest_without_layout_or_repeated_text() {
        let nodes = vec![
            node("1", None, "RootWebArea", "Page", &["2"]),
            node("2", Some("1"), "generic", "", &["3", "5", "6"]),
            node("3", Some("2"), "button", "Go \"now\"", &["4"]),
            node("4", Some("3"), "StaticText", "Go \"now\"", &[]),
            node("5", Some("2"), "StaticText", "Some  words", &[]),
            node("6", Some("2"), "textbox", "Name", &[]),
        ];
        assert_eq!(
            outline(&nodes),
            "- button \"Go \\\"now\\\"\" [ref=103]\n- text: Some words\n- textbox \"Name\" [ref=106]"
        );
    }
}
