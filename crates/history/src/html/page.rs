//! The page around the charts: one self-contained HTML file in the look
//! of `report.html` (`crates/report/src/html/page.rs`): its CSS inline, no
//! script, and a Content-Security-Policy that forbids every load from
//! anywhere, naming the style block by its hash.

use base64::Engine;
use sha2::{Digest, Sha256};

pub const CSS: &str = r#"
:root{color-scheme:light}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;max-width:1400px;padding:0 16px 48px;color:#1a1a1a;background:#fff}
h1{font-size:1.6em;margin:.8em 0 .2em}h2{border-bottom:2px solid #0072b2;padding-bottom:.15em;margin-top:1.8em;font-size:1.25em}
.meta{color:#555}
.note{background:#f2f2f2;border-left:4px solid #777;padding:.2em 1em}
.figure{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start;margin:.5em 0 1.5em}
.plot{flex:0 1 auto;min-width:0;max-width:100%}.numbers{flex:1 1 460px;min-width:0}.scroll{overflow-x:auto;max-width:100%}
svg.chart{max-width:100%;height:auto;display:block;margin-bottom:8px}
table{border-collapse:collapse;margin:.3em 0 .8em;font-size:.9em}
th,td{border:1px solid #ccc;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#eef4fa}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.label{white-space:nowrap}.plot p.meta{max-width:820px;font-size:.85em}
td.regression{color:#a04000;font-weight:600}td.progression{color:#007a57;font-weight:600}
nav ul{padding-left:1.2em;columns:2}
@media (max-width:700px){body{font-size:14px;padding:0 8px}nav ul{columns:1}}
@media print{body{max-width:none;font-size:11pt}.figure,table{break-inside:avoid}nav{display:none}a{color:inherit}}
"#;

/// The Content-Security-Policy: nothing from anywhere but this page's own
/// style block (by its SHA-256) and inline images.
pub fn csp() -> String {
    let hash = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(CSS.as_bytes()));
    format!(
        "default-src 'none'; style-src 'sha256-{hash}'; img-src data:; base-uri 'none'; form-action 'none'"
    )
}

/// `text` with `&`, `<`, `>`, `"` and `'` escaped.
pub fn escape(text: &str) -> String {
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

/// The page's start, up to its body.
pub fn head(title: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta name=\"generator\" content=\"pktlab {}\">\n<title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n",
        csp(),
        env!("CARGO_PKG_VERSION"),
        escape(title)
    )
}

pub fn foot() -> &'static str {
    "</body>\n</html>\n"
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::process::{Command, Stdio};

    use super::*;

    #[test]
    fn the_csp_names_the_style_by_its_hash() {
        // base64(SHA-256(CSS)) by openssl and coreutils, not by our code.
        let mut child = Command::new("sh")
            .args(["-c", "openssl dgst -sha256 -binary | base64 -w0"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("sh with openssl and base64 (Debian's openssl and coreutils)");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(CSS.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        let hash = String::from_utf8(out.stdout).unwrap();
        assert!(
            csp().contains(&format!("style-src 'sha256-{hash}';")),
            "{}",
            csp()
        );
        let page = head("a <b>");
        assert!(page.contains(&format!("<style>{CSS}</style>")));
        assert!(page.contains("<title>a &lt;b&gt;</title>"));
    }

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            escape(r#"<a href="x">&'b'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;b&#39;&lt;/a&gt;"
        );
    }
}
