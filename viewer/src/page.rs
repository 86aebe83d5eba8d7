//! The page: one HTML template for the live server and for `--export`. Both inline
//! the page's script, styles and uPlot; three.js (an ES module) comes from the server
//! when live and from a text block turned into a blob URL in an exported file, so the
//! export opens from disk without fdc or a network.

use crate::session::State;

/// three.js r170 and uPlot 1.6.31 from npm, vendored by `viewer/vendor.sh` (pinned
/// sha512; MIT, licences in `web/vendor/`).
pub const THREE_JS: &str = include_str!("../web/vendor/three.module.min.js");
const UPLOT_JS: &str = include_str!("../web/vendor/uPlot.iife.min.js");
const UPLOT_CSS: &str = include_str!("../web/vendor/uPlot.min.css");
const APP_JS: &str = include_str!("../web/app.js");
const APP_CSS: &str = include_str!("../web/app.css");
const INDEX: &str = include_str!("../web/index.html");

/// Text that may stand inside a `<script>` element: `</` cannot end it early.
fn script_safe(s: &str) -> String {
    s.replace("</", "<\\/")
}

fn html(embed: &str, three_block: &str) -> String {
    INDEX
        .replace("/*APP_CSS*/", APP_CSS)
        .replace("/*UPLOT_CSS*/", UPLOT_CSS)
        .replace("/*UPLOT_JS*/", &script_safe(UPLOT_JS))
        .replace("/*EMBED*/null", &script_safe(embed))
        .replace("<!--THREE-->", three_block)
        .replace("/*APP_JS*/", &script_safe(APP_JS))
}

/// The page the server serves: it polls the server's state.
pub fn live_html() -> String {
    html("null", "")
}

/// One self-contained file with the scene and every run of `state`.
pub fn export_html(state: &State) -> String {
    let three = format!(
        "<script type=\"text/plain\" id=\"three-src\">{}</script>",
        script_safe(THREE_JS)
    );
    html(&state.snapshot().to_string(), &three)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_placeholder_is_filled() {
        let page = export_html(&State::default());
        assert!(!page.contains("/*APP_JS*/") && !page.contains("<!--THREE-->"));
        // Only the closing tags of the page's own elements remain.
        assert_eq!(
            page.matches("</script>").count(),
            INDEX.matches("</script>").count() + 1
        );
    }
}
