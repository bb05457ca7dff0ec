//! Flame graphs from folded stacks, drawn by inferno: one profile, or the
//! difference between two (inferno's differential mode, the first profile
//! scaled to the second's sample count so only the shape differs).
//!
//! The SVGs carry inferno's own script (search, zoom, reset) and no
//! external references, so a report that embeds them works offline.

use inferno::flamegraph::{self, color::Palette, Options};
use std::str::FromStr;

/// Why a flame graph could not be drawn (no samples, or inferno failed).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FlameError(pub String);

/// A flame graph of one profile; kernel frames (`_[k]`) are orange.
pub fn flame_svg(title: &str, subtitle: &str, folded: &str) -> Result<String, FlameError> {
    let mut opts = options(title, subtitle);
    render(&mut opts, folded)
}

/// A differential flame graph: frames are drawn as in `after`, red where
/// `after` spends a larger share than `before`, blue where smaller.
pub fn diff_svg(
    title: &str,
    subtitle: &str,
    before: &str,
    after: &str,
) -> Result<String, FlameError> {
    let mut diff = Vec::new();
    let opts = inferno::differential::Options {
        normalize: true,
        strip_hex: true,
    };
    inferno::differential::from_readers(opts, before.as_bytes(), after.as_bytes(), &mut diff)
        .map_err(|e| FlameError(format!("differential folding failed: {e}")))?;
    let mut opts = options(title, subtitle);
    render(&mut opts, &String::from_utf8_lossy(&diff))
}

fn options<'a>(title: &str, subtitle: &str) -> Options<'a> {
    let mut opts = Options::default();
    opts.title = title.to_string();
    opts.subtitle = Some(subtitle.to_string());
    opts.colors = Palette::from_str("java").unwrap_or_default();
    opts.deterministic = true;
    opts.count_name = "ns".into();
    opts.image_width = Some(980);
    opts
}

fn render(opts: &mut Options, folded: &str) -> Result<String, FlameError> {
    if folded.trim().is_empty() {
        return Err(FlameError("no samples to draw".into()));
    }
    let mut svg = Vec::new();
    flamegraph::from_lines(opts, folded.lines(), &mut svg)
        .map_err(|e| FlameError(format!("drawing the flame graph failed: {e}")))?;
    String::from_utf8(svg).map_err(|e| FlameError(format!("flame graph: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "nginx;ngx_process_events;tcp_sendmsg_[k] 30\nnginx;ngx_process_events;tcp_recvmsg_[k] 10\n";
    const B: &str = "nginx;ngx_process_events;tcp_sendmsg_[k] 10\nnginx;ngx_process_events;tcp_recvmsg_[k] 30\n";

    #[test]
    fn a_flame_graph_is_a_scripted_svg_with_the_frames() {
        let svg = flame_svg("nginx", "peak", A).unwrap();
        assert!(svg.contains("<svg"), "not an svg");
        assert!(svg.contains("<title>tcp_sendmsg ("), "kernel frame missing");
        assert!(svg.contains("function search"), "search script missing");
        assert!(!svg.contains("http://") || !svg.contains("src=\"http"));
    }

    #[test]
    fn a_differential_graph_colours_growth_red_and_shrinkage_blue() {
        let svg = diff_svg("diff", "a vs b", A, B).unwrap();
        // tcp_recvmsg grew from 25% to 75%: red; tcp_sendmsg shrank: blue.
        let frame = |name: &str| {
            let at = svg.find(&format!("<title>{name} (")).unwrap();
            svg[at..].split("fill=\"").nth(1).unwrap()[..18].to_string()
        };
        assert!(
            frame("tcp_recvmsg").starts_with("rgb(255,"),
            "{}",
            frame("tcp_recvmsg")
        );
        assert!(
            frame("tcp_sendmsg").contains(",255)"),
            "{}",
            frame("tcp_sendmsg")
        );
    }

    #[test]
    fn nothing_to_draw_is_an_error_not_an_empty_picture() {
        assert!(flame_svg("t", "s", "  \n").is_err());
    }
}
