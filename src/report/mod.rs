//! INTERIM (replaced by the report branch).
pub mod terminal {
    pub fn render(d: &crate::store::RunData, _c: bool) -> String {
        let mut s = String::new();
        for t in &d.trials {
            s += &format!("{} {} {:?}\n", t.system, t.point.label(), t.throughput());
        }
        s
    }
}
pub mod html {
    pub fn render(_d: &crate::store::RunData) -> String {
        "<html></html>".into()
    }
}
pub mod json {
    pub fn export(d: &crate::store::RunData) -> serde_json::Value {
        serde_json::to_value(d).unwrap_or_default()
    }
}
pub mod csv {
    pub fn export(_d: &crate::store::RunData) -> String {
        String::new()
    }
}
