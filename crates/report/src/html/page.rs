//! The page around the sections: one self-contained HTML file with its
//! CSS, its charts inline, a Content-Security-Policy that forbids every
//! network load, and a tiny script that writes a self-check into the page
//! (charts drawn, text overflowing its chart, script errors) so that a
//! headless browser can tell whether the page renders.

use super::data::Folder;
use super::escape::html;
use super::{losses, rfc_section, sections};

pub const CSS: &str = r#"
:root{color-scheme:light}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;max-width:1400px;padding:0 16px 48px;color:#1a1a1a;background:#fff}
h1{font-size:1.6em;margin:.8em 0 .2em}h2{border-bottom:2px solid #0072b2;padding-bottom:.15em;margin-top:1.8em}
h3{margin:1.4em 0 .4em}h4{margin:1em 0 .3em}
.meta{color:#555}
.warnings{background:#fff4e5;border:2px solid #d55e00;border-radius:6px;padding:.5em 1em;margin:1em 0}
.warnings p{margin:.4em 0}.warnings strong{color:#a04000}
.missing{background:#f2f2f2;border-left:4px solid #777;padding:.2em 1em}
.missing h2{border:0;font-size:1.1em}
.figure{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start;margin:.5em 0 1.5em}
.plot{flex:0 1 auto;min-width:0;max-width:100%}.numbers{flex:1 1 420px;min-width:0}
svg.chart{max-width:100%;height:auto;display:block;margin-bottom:8px}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(400px,1fr));gap:12px}
.cell{min-width:0}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;margin:.3em 0 .8em;font-size:.9em}
th,td{border:1px solid #ccc;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#eef4fa}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
pre.ministat{font:12px/1.25 ui-monospace,"DejaVu Sans Mono",Menlo,monospace;overflow-x:auto;background:#f7f7f7;padding:8px;border:1px solid #ddd;max-width:100%}
pre.results{white-space:pre-wrap}
details summary{cursor:pointer;color:#0060a0}
nav ul{padding-left:1.2em;columns:2}
#selfcheck{display:none}
@media (max-width:700px){body{font-size:14px;padding:0 8px}.grid{grid-template-columns:1fr}nav ul{columns:1}}
@media print{body{max-width:none;font-size:11pt}.figure,.cell,table,pre{break-inside:avoid}details{display:block}details>*{display:block}
 .scroll,pre.ministat{overflow:visible}nav{display:none}h2{break-before:auto}a{color:inherit}}
"#;

/// Writes `{"charts":N,"overflow":[...],"overlaps":[...],"errors":[...]}` into
/// `#selfcheck`: SVG charts, chart texts outside their chart's box, pairs
/// of overlapping texts within a chart, and any script error. Before
/// printing it opens every `<details>`, so that paper has every number.
pub const SCRIPT: &str = r#"
(function(){var out={charts:0,overflow:[],overlaps:[],errors:[]};
try{var svgs=document.querySelectorAll("svg.chart");out.charts=svgs.length;
for(var i=0;i<svgs.length;i++){var s=svgs[i],vb=s.viewBox.baseVal,ts=s.querySelectorAll("text"),bs=[];
for(var j=0;j<ts.length;j++){var t=ts[j];if(!t.textContent.trim())continue;var b=t.getBBox();
var m=t.getCTM(),r={x:b.x,y:b.y,w:b.width,h:b.height};
if(t.getAttribute("transform")){var sb=t.getBoundingClientRect(),sv=s.getBoundingClientRect(),k=vb.width/sv.width;r={x:(sb.left-sv.left)*k,y:(sb.top-sv.top)*k,w:sb.width*k,h:sb.height*k};}
if(r.x<-1||r.y<-1||r.x+r.w>vb.width+1||r.y+r.h>vb.height+1)out.overflow.push(i+": "+t.textContent);
r.t=t.textContent.trim();bs.push(r);}
for(var a=0;a<bs.length;a++)for(var c=a+1;c<bs.length;c++){var p=bs[a],q=bs[c];
if(p.x+1<q.x+q.w&&q.x+1<p.x+p.w&&p.y+1<q.y+q.h&&q.y+1<p.y+p.h)out.overlaps.push(i+": "+p.t+" / "+q.t);}}}
catch(e){out.errors.push(String(e))}
window.addEventListener("beforeprint",function(){var d=document.querySelectorAll("details");for(var i=0;i<d.length;i++)d[i].open=true;});
var el=document.getElementById("selfcheck");el.textContent=JSON.stringify(out);el.setAttribute("data-done","1");})();
"#;

/// base64 of the SHA-256 of [`CSS`] and [`SCRIPT`], as the CSP names them
/// (a unit test recomputes them with `openssl dgst`).
pub const CSS_SHA256: &str = "62ZnbGoFnjsDGBznYo5XwSkw2j5EurUUu5zFpje3WnA=";
pub const SCRIPT_SHA256: &str = "4Hp918p2MB4gROtMVrsQUH2s2fO4Y3VgOS8RmsR8YG0=";

/// The Content-Security-Policy: nothing from anywhere, except this page's
/// own style block and self-check script, named by their hashes.
pub fn csp() -> String {
    format!(
        "default-src 'none'; style-src 'sha256-{CSS_SHA256}'; script-src 'sha256-{SCRIPT_SHA256}'; img-src data:; base-uri 'none'; form-action 'none'"
    )
}

pub(crate) fn head(title: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta name=\"generator\" content=\"pktlab {}\">\n<title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n",
        csp(),
        env!("CARGO_PKG_VERSION"),
        html(title)
    )
}

pub(crate) fn foot() -> String {
    format!("<div id=\"selfcheck\"></div>\n<script>{SCRIPT}</script>\n</body>\n</html>\n")
}

fn warnings(f: &Folder) -> String {
    let w = sections::warnings(f);
    if w.is_empty() {
        return String::new();
    }
    let items: String = w
        .iter()
        .map(|t| {
            let (head, rest) = t.split_once(':').unwrap_or((t, ""));
            format!("<p><strong>{}:</strong>{}</p>", html(head), html(rest))
        })
        .collect();
    format!("<div class=\"warnings\" role=\"alert\">{items}</div>")
}

/// The sections of one folder, with a table of contents: a search
/// folder's answer (NDR and PDR) first, a fixed-rate campaign's summary
/// first.
fn body(f: &Folder) -> String {
    let parts = match &f.searches {
        Some(_) => vec![
            ("rfc2544", "RFC 2544", rfc_section::rfc2544(f)),
            (
                "knob-sweep",
                "Knob sweep",
                super::knob_sweep::search_section(f),
            ),
            ("summary", "Campaign and lab", sections::search_summary(f)),
            ("drops", "Where the lost frames went", losses::section(f)),
            ("missing", "Not in this folder", sections::missing(f)),
        ],
        None => vec![
            ("summary", "Summary", sections::summary(f)),
            (
                "configurations",
                "Configurations compared",
                sections::configurations(f),
            ),
            ("runs", "Runs over time", sections::runs_over_time(f)),
            ("drops", "Where the lost frames went", losses::section(f)),
            ("load", "DUT load", sections::dut_load(f)),
            ("sweep", "Size sweep", sections::size_sweep(f)),
            ("knob-sweep", "Knob sweep", super::knob_sweep::section(f)),
            ("interfaces", "Interfaces", sections::interfaces(f)),
            ("missing", "Not in this folder", sections::missing(f)),
        ],
    };
    let nav: String = parts
        .iter()
        .filter(|p| !p.2.is_empty())
        .map(|(id, name, _)| format!("<li><a href=\"#{id}\">{name}</a></li>"))
        .collect();
    let mut out = format!("<nav><ul>{nav}</ul></nav>");
    for p in parts {
        out += &p.2;
    }
    out
}

/// The page of one results folder.
pub fn folder_page(f: &Folder) -> String {
    let title = format!("pktlab report: {}", f.name);
    let mut out = head(&title);
    out += &format!(
        "<h1>{}</h1>\n<p class=\"meta\">Results folder <code>{}</code></p>\n",
        html(&title),
        html(&f.path.display().to_string())
    );
    out += &warnings(f);
    out += &body(f);
    out + &foot()
}

/// One page comparing folders: the same configuration and traffic across
/// folders first (the first folder as baseline), then each folder whole.
pub fn comparison_page(folders: &[Folder]) -> String {
    let labels: Vec<String> = folders.iter().map(Folder::label).collect();
    let title = format!("pktlab report: {}", labels.join(" vs "));
    let mut out = head(&title);
    out += &format!("<h1>{}</h1>\n", html(&title));
    out += &super::across::section(folders);
    for (i, f) in folders.iter().enumerate() {
        // Ids stay unique: each folder's sections are under its own article.
        let inner = warnings(f) + &body(f);
        let inner = inner
            .replace("id=\"", &format!("id=\"f{i}-"))
            .replace("href=\"#", &format!("href=\"#f{i}-"));
        out += &format!(
            "<article><h2 class=\"folder\">Folder {}: {}</h2><p class=\"meta\"><code>{}</code></p>{inner}</article>",
            i + 1,
            html(&labels[i]),
            html(&f.path.display().to_string())
        );
    }
    out + &foot()
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::process::{Command, Stdio};

    use super::*;

    /// base64(SHA-256(text)) by `openssl dgst` and `base64`, independently
    /// of our code.
    fn sha256_base64(text: &str) -> String {
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
            .write_all(text.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "openssl dgst failed");
        String::from_utf8(out.stdout).unwrap()
    }

    #[test]
    fn the_csp_names_the_style_and_script_by_their_hashes() {
        assert_eq!(
            sha256_base64(CSS),
            CSS_SHA256,
            "CSS changed: update CSS_SHA256"
        );
        assert_eq!(
            sha256_base64(SCRIPT),
            SCRIPT_SHA256,
            "SCRIPT changed: update SCRIPT_SHA256"
        );
        let page = head("t") + &foot();
        assert!(page.contains(&format!("<style>{CSS}</style>")));
        assert!(page.contains(&format!("<script>{SCRIPT}</script>")));
        assert!(page.contains("default-src 'none';"));
    }
}
