//! Text into HTML: every string from a results folder (configuration
//! names, host names, ministat text) goes through [`html`].

/// `text` with `&`, `<`, `>`, `"` and `'` escaped: safe in element text and
/// in quoted attribute values.
pub fn html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            super::html(r#"<a href="x">&'b'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;b&#39;&lt;/a&gt;"
        );
        assert_eq!(super::html("plain −29.1 %"), "plain −29.1 %");
    }
}
