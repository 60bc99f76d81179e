//! An HTML page as readable markdown: its title, and its main content first.
//!
//! The page is parsed once (html5ever, through `htmd`). The main content is the page's
//! `<main>`, else its largest `<article>`, else an element with `role="main"`, else the
//! body. Navigation, headers, footers, asides, scripts, styles, forms and embedded frames are
//! left out. Links are made useful to a reader who cannot click: relative ones absolute (so
//! the model can fetch them), those within the page and those without text left as their
//! text or out. The markdown itself is `htmd`'s.

use std::rc::Rc;

use markup5ever_rcdom::{Handle, NodeData};
use reqwest::Url;

/// Tags whose content is never part of what a reader reads.
const SKIPPED: [&str; 14] = [
    "script", "style", "noscript", "template", "nav", "header", "footer", "aside", "form",
    "iframe", "svg", "canvas", "button", "dialog",
];

/// Elements nested deeper than this keep only their text: the markdown converter walks the
/// tree recursively, and a hostile or broken page can nest thousands deep.
const MAX_DEPTH: usize = 200;

/// A page made readable.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    /// The `<title>` (or the first `<h1>`), whitespace collapsed; empty when there is none.
    pub title: String,
    /// The main content as markdown.
    pub markdown: String,
}

/// Makes `html`, found at `url` (which relative links are read against), readable.
pub fn readable(html: &str, url: Option<&Url>) -> Page {
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(SKIPPED.to_vec())
        .build();
    let document = match converter.html_to_tree(html) {
        Ok(document) => document,
        // The parser reads from a string: it does not fail; keep the text if it ever does.
        Err(_) => {
            return Page {
                title: String::new(),
                markdown: html.to_string(),
            };
        }
    };
    flatten_deep(&document);
    let title = first_text(&document, "title")
        .or_else(|| first_text(&document, "h1"))
        .unwrap_or_default();
    let main = main_content(&document).unwrap_or_else(|| document.clone());
    // A `<base href>` moves where relative links point.
    let base = find(&document, &|n| is_element(n, "base"))
        .and_then(|b| attribute(&b, "href"))
        .and_then(|href| match url {
            Some(url) => url.join(&href).ok(),
            None => Url::parse(&href).ok(),
        });
    tidy_links(&main, base.as_ref().or(url));
    Page {
        title,
        markdown: converter.tree_to_markdown(&main),
    }
}

/// Elements at [`MAX_DEPTH`] keep their subtree's text in their first text node alone.
fn flatten_deep(document: &Handle) {
    let mut stack = vec![(document.clone(), 0usize)];
    while let Some((node, depth)) = stack.pop() {
        if depth < MAX_DEPTH {
            let children = node.children.borrow();
            stack.extend(children.iter().map(|c| (c.clone(), depth + 1)));
            continue;
        }
        let mut text = String::new();
        push_text(&node, &mut text);
        let first = find(&node, &|n| matches!(n.data, NodeData::Text { .. }));
        let kept = first.filter(|n| !Rc::ptr_eq(n, &node));
        if let Some(kept) = &kept
            && let NodeData::Text { contents } = &kept.data
        {
            let mut contents = contents.borrow_mut();
            contents.clear();
            contents.push_slice(text.trim());
        }
        *node.children.borrow_mut() = kept.into_iter().collect();
    }
}

/// Links and images under `root` as a reader of text needs them: a link with no text (an
/// icon, a "run this" button) goes, one to a place in the page or to script keeps its text
/// alone, and relative addresses become absolute against `base`.
fn tidy_links(root: &Handle, base: Option<&Url>) {
    let mut stack = vec![root.clone()];
    while let Some(node) = stack.pop() {
        node.children
            .borrow_mut()
            .retain(|child| !is_element(child, "a") || text_len(child) > 0 || has_image(child));
        for (tag, key) in [("a", "href"), ("img", "src")] {
            if !is_element(&node, tag) {
                continue;
            }
            let NodeData::Element { attrs, .. } = &node.data else {
                continue;
            };
            let mut attrs = attrs.borrow_mut();
            let Some(at) = attrs.iter().position(|a| a.name.local.as_ref() == key) else {
                continue;
            };
            let value = attrs[at].value.trim().to_string();
            let lower = value.to_ascii_lowercase();
            if tag == "a"
                && (value.is_empty() || value.starts_with('#') || lower.starts_with("javascript:"))
            {
                attrs.retain(|a| !matches!(a.name.local.as_ref(), "href" | "title"));
            } else if let Some(absolute) = base.and_then(|b| b.join(&value).ok()) {
                attrs[at].value = absolute.as_str().into();
            }
        }
        stack.extend(node.children.borrow().iter().cloned());
    }
}

fn has_image(node: &Handle) -> bool {
    find(node, &|n| is_element(n, "img")).is_some()
}

/// The element holding the page's main content, if one says so (or is an article).
fn main_content(document: &Handle) -> Option<Handle> {
    if let Some(main) = find(document, &|n| is_element(n, "main")) {
        return Some(main);
    }
    let mut articles = Vec::new();
    collect(document, &|n| is_element(n, "article"), &mut articles);
    if let Some(largest) = articles.into_iter().max_by_key(text_len) {
        return Some(largest);
    }
    find(document, &|n| {
        attribute(n, "role").as_deref() == Some("main")
    })
    .or_else(|| find(document, &|n| is_element(n, "body")))
}

/// The text of the first `tag` element, whitespace collapsed.
fn first_text(document: &Handle, tag: &str) -> Option<String> {
    let node = find(document, &|n| is_element(n, tag))?;
    let mut text = String::new();
    push_text(&node, &mut text);
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    (!text.is_empty()).then_some(text)
}

fn is_element(node: &Handle, tag: &str) -> bool {
    matches!(&node.data, NodeData::Element { name, .. } if name.local.as_ref() == tag)
}

fn attribute(node: &Handle, key: &str) -> Option<String> {
    let NodeData::Element { attrs, .. } = &node.data else {
        return None;
    };
    attrs
        .borrow()
        .iter()
        .find(|a| a.name.local.as_ref() == key)
        .map(|a| a.value.to_string())
}

/// The first node, in document order, that `wanted` accepts (an explicit stack: deep pages
/// cannot overflow the call stack).
fn find(root: &Handle, wanted: &dyn Fn(&Handle) -> bool) -> Option<Handle> {
    let mut stack = vec![root.clone()];
    while let Some(node) = stack.pop() {
        if wanted(&node) {
            return Some(node);
        }
        stack.extend(node.children.borrow().iter().rev().cloned());
    }
    None
}

/// Every node `wanted` accepts, outermost only.
fn collect(root: &Handle, wanted: &dyn Fn(&Handle) -> bool, out: &mut Vec<Handle>) {
    let mut stack = vec![root.clone()];
    while let Some(node) = stack.pop() {
        if wanted(&node) {
            out.push(node);
            continue;
        }
        stack.extend(node.children.borrow().iter().rev().cloned());
    }
}

/// How much text a subtree holds, skipped tags aside.
fn text_len(node: &Handle) -> usize {
    let mut text = String::new();
    push_text(node, &mut text);
    text.len()
}

/// The text under `node`, skipped tags left out.
fn push_text(node: &Handle, out: &mut String) {
    let mut stack = vec![Rc::clone(node)];
    while let Some(node) = stack.pop() {
        match &node.data {
            NodeData::Text { contents } => {
                out.push_str(&contents.borrow());
                out.push(' ');
            }
            NodeData::Element { name, .. } if SKIPPED.contains(&name.local.as_ref()) => {}
            _ => stack.extend(node.children.borrow().iter().rev().cloned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_main_element_comes_without_navigation_or_scripts() {
        let page = readable(
            "<html><head><title> The  Parser\n</title><script>var x = 1;</script></head>\
             <body><nav><a href='/'>Home</a></nav><header>Site</header>\
             <main><h1>Parsing</h1><p>A <b>fast</b> parser, see <a href='/docs'>docs</a>.</p>\
             <ul><li>one</li><li>two</li></ul></main><footer>© 2026</footer></body></html>",
            None,
        );
        assert_eq!(page.title, "The Parser");
        assert!(page.markdown.starts_with("# Parsing"), "{}", page.markdown);
        assert!(page.markdown.contains("**fast**"), "{}", page.markdown);
        assert!(page.markdown.contains("[docs](/docs)"), "{}", page.markdown);
        assert!(page.markdown.contains("one"), "{}", page.markdown);
        for gone in ["Home", "Site", "© 2026", "var x"] {
            assert!(!page.markdown.contains(gone), "{gone}: {}", page.markdown);
        }
    }

    #[test]
    fn the_largest_article_is_the_content_else_the_body() {
        let page = readable(
            "<body><article><p>teaser</p></article>\
             <article><h2>Story</h2><p>the whole story, told at length</p></article></body>",
            None,
        );
        assert_eq!(page.title, "", "no title and no h1");
        assert!(
            page.markdown.contains("the whole story"),
            "{}",
            page.markdown
        );
        assert!(!page.markdown.contains("teaser"), "{}", page.markdown);
        let plain = readable("<p>just text</p><aside>ads</aside>", None);
        assert_eq!(plain.markdown, "just text");
    }

    #[test]
    fn a_deep_page_does_not_overflow() {
        let html = format!("{}deep{}", "<div>".repeat(3_000), "</div>".repeat(3_000));
        assert!(readable(&html, None).markdown.contains("deep"));
    }

    #[test]
    fn links_point_where_a_reader_can_follow() {
        let url = Url::parse("https://docs.example.org/guide/parsing.html").unwrap();
        let html = "<main><h2><a href='#intro'>Intro</a></h2>\
            <p>See <a href='../api/index.html' title='API'>the API</a>, \
            <a href='https://other.org/x'>elsewhere</a>, <a href='javascript:go()'>go</a>.</p>\
            <a href='https://play.example.org/?code=1'><svg></svg></a>\
            <a href='/home'><img src='logo.png' alt='Logo'></a></main>";
        let page = readable(html, Some(&url));
        let md = &page.markdown;
        assert!(md.starts_with("## Intro\n"), "{md}");
        for kept in [
            "[the API](https://docs.example.org/api/index.html \"API\")",
            "[elsewhere](https://other.org/x)",
            ", go.",
            "[![Logo](https://docs.example.org/guide/logo.png)](https://docs.example.org/home)",
        ] {
            assert!(md.contains(kept), "{kept} in {md}");
        }
        assert!(!md.contains("play.example.org"), "{md}");
        // A `<base href>` moves them.
        let based = readable(
            "<head><base href='/v2/'></head><body><a href='start.html'>start</a></body>",
            Some(&url),
        );
        assert_eq!(
            based.markdown,
            "[start](https://docs.example.org/v2/start.html)"
        );
    }
}
