//! Prints a syntax tree back as fd source. Nested operators are always parenthesized,
//! so the output parses to the same tree (the round-trip property test checks it).
//! Comments other than doc comments are not kept.

use crate::ast::*;
use std::fmt::Write;

/// fd source for a whole module.
pub fn module(m: &Module) -> String {
    let mut out = String::new();
    for item in &m.items {
        print_item(&mut out, item);
    }
    out
}

fn doc(out: &mut String, d: &Option<String>, indent: &str) {
    if let Some(d) = d {
        for line in d.lines() {
            let _ = writeln!(out, "{indent}/// {line}");
        }
    }
}

/// A function's arguments as written: `x: scalar, v: vec3`.
pub fn fn_args(f: &FnDecl) -> String {
    let args: Vec<String> = (f.args.iter())
        .map(|(n, t)| format!("{}: {}", n.name, t.name))
        .collect();
    args.join(", ")
}

fn param_rest(p: &ParamDecl) -> String {
    let mut s = p.name.name.clone();
    if let Some(t) = &p.ty {
        let _ = write!(s, ": {}", t.name);
    }
    if let Some(d) = &p.default {
        let _ = write!(s, " = {}", expr(d));
    }
    s
}

fn print_item(out: &mut String, item: &Item) {
    match item {
        Item::Use { path, .. } => {
            let _ = writeln!(out, "use \"{path}\";");
        }
        Item::Param(p) => {
            doc(out, &p.doc, "");
            let _ = writeln!(out, "param {};", param_rest(p));
        }
        Item::Input(p) => {
            doc(out, &p.doc, "");
            let _ = writeln!(out, "input {};", param_rest(p));
        }
        Item::Fn(f) => {
            doc(out, &f.doc, "");
            let ret = f
                .ret
                .as_ref()
                .map(|r| format!(": {}", r.name))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "fn {}({}){ret} = {};",
                f.name.name,
                fn_args(f),
                expr(&f.body)
            );
        }
        Item::Gravity { value, .. } => {
            let _ = writeln!(out, "gravity {};", expr(value));
        }
        Item::Output {
            name, index, value, ..
        } => {
            let index: String = index.iter().map(|e| format!("[{}]", expr(e))).collect();
            let _ = writeln!(out, "output {}{index} = {};", name.name, expr(value));
        }
        Item::Simulate { settings, .. } => {
            out.push_str("simulate {\n");
            for f in settings {
                let _ = writeln!(out, "    {} = {};", f.name.name, expr(&f.value));
            }
            out.push_str("}\n");
        }
        Item::Spline(s) => {
            doc(out, &s.doc, "");
            let _ = writeln!(
                out,
                "spline {} = {}({});",
                s.name.name,
                s.method.name,
                exprs(&s.args)
            );
        }
        // A one-off element is printed with its type (below).
        Item::Shape(sh) => shape(out, sh),
        Item::Instance(i) if i.ty.name.starts_with("on@") => {}
        Item::Instance(i) => instance(out, i, ""),
        Item::TypeDef(t) if t.inline_instance().is_some() => {
            doc(out, &t.doc, "");
            let conns: Vec<&str> = t.connections.iter().map(|c| c.name.name.as_str()).collect();
            let _ = writeln!(
                out,
                "{} {}: on({}) {{",
                t.kind.keyword(),
                t.inline_instance().unwrap_or_default(),
                conns.join(", ")
            );
            for s in &t.body {
                stmt(out, s);
            }
            out.push_str("}\n");
        }
        Item::TypeDef(t) => {
            doc(out, &t.doc, "");
            let conns: Vec<String> = t
                .connections
                .iter()
                .map(|c| match &c.default {
                    Some(d) => format!("{}: {} = {}", c.name.name, c.ty.name, expr(d)),
                    None => format!("{}: {}", c.name.name, c.ty.name),
                })
                .collect();
            let _ = writeln!(
                out,
                "{} {}({}) {{",
                t.kind.keyword(),
                t.name.name,
                conns.join(", ")
            );
            for s in &t.body {
                stmt(out, s);
            }
            out.push_str("}\n");
        }
        Item::For(l) => {
            let mut inner = String::new();
            for i in &l.body {
                print_item(&mut inner, i);
            }
            let _ = writeln!(out, "{} {{", loop_head(l));
            out.push_str(&indented(&inner));
            out.push_str("}\n");
        }
        Item::When(c) => {
            let (mut then, mut otherwise) = (String::new(), String::new());
            c.then.iter().for_each(|i| print_item(&mut then, i));
            c.otherwise
                .iter()
                .for_each(|i| print_item(&mut otherwise, i));
            cond_block(out, c, &then, &otherwise, "");
        }
        Item::Error(_) => {}
    }
}

fn loop_head<T>(l: &Loop<T>) -> String {
    format!(
        "for {} in {}..{}",
        l.var.name,
        operand(&l.from),
        operand(&l.to)
    )
}

/// Every line of `text` four spaces further in.
fn indented(text: &str) -> String {
    text.lines().map(|l| format!("    {l}\n")).collect()
}

fn cond_block<T>(out: &mut String, c: &Cond<T>, then: &str, otherwise: &str, indent: &str) {
    let _ = writeln!(out, "{indent}if {} {{", expr(&c.cond));
    out.push_str(&indented(then));
    if c.otherwise.is_empty() {
        let _ = writeln!(out, "{indent}}}");
    } else {
        let _ = writeln!(out, "{indent}}} else {{");
        out.push_str(&indented(otherwise));
        let _ = writeln!(out, "{indent}}}");
    }
}

/// Statements printed one level in, without their own indentation (callers add it).
fn stmts_text(body: &[Stmt]) -> String {
    let mut inner = String::new();
    body.iter().for_each(|s| stmt(&mut inner, s));
    inner
        .lines()
        .map(|l| format!("{}\n", l.strip_prefix("    ").unwrap_or(l)))
        .collect()
}

fn shape(out: &mut String, sh: &ShapeDecl) {
    let _ = writeln!(out, "shape {} on {} {{", sh.kind.name, expr(&sh.body));
    for f in &sh.fields {
        let _ = writeln!(out, "    {} = {};", f.name.name, expr(&f.value));
    }
    out.push_str("}\n");
}

fn instance(out: &mut String, i: &Instance, indent: &str) {
    doc(out, &i.doc, indent);
    let _ = write!(
        out,
        "{indent}{} {}{}: {}",
        i.kind.keyword(),
        i.name.name,
        i.index
            .iter()
            .map(|e| format!("[{}]", expr(e)))
            .collect::<String>(),
        i.ty.name
    );
    if !i.connections.is_empty() {
        let _ = write!(out, "({})", exprs(&i.connections));
    }
    out.push_str(" {\n");
    for f in &i.fields {
        let _ = writeln!(out, "{indent}    {} = {};", f.name.name, expr(&f.value));
    }
    let _ = writeln!(out, "{indent}}}");
}

fn stmt(out: &mut String, s: &Stmt) {
    let line = match &s.kind {
        StmtKind::Param(p) => {
            doc(out, &p.doc, "    ");
            format!("param {};", param_rest(p))
        }
        StmtKind::Let { name, ty, value } => match ty {
            Some(t) => format!("let {}: {} = {};", name.name, t.name, expr(value)),
            None => format!("let {} = {};", name.name, expr(value)),
        },
        StmtKind::Constrain(e) => format!("constrain {};", expr(e)),
        StmtKind::ApplyForce { force, body, at } => match at {
            Some(at) => format!(
                "apply force {} on {} at {};",
                expr(force),
                expr(body),
                expr(at)
            ),
            None => format!("apply force {} on {};", expr(force), expr(body)),
        },
        StmtKind::ApplyTorque { torque, body } => {
            format!("apply torque {} on {};", expr(torque), expr(body))
        }
        StmtKind::ApplyBodyTorque { torque, body } => {
            format!("apply body_torque {} on {};", expr(torque), expr(body))
        }
        StmtKind::ApplyGeneralized { value, along } => {
            format!("apply generalized {} along {};", expr(value), expr(along))
        }
        StmtKind::State { name, value } => format!("state {} = {};", name.name, expr(value)),
        StmtKind::Output { name, value } => format!("output {} = {};", name.name, expr(value)),
        StmtKind::CoordinatesGroup { group, args } => {
            format!("coordinates {}({});", group.name, exprs(args))
        }
        StmtKind::Coordinates(cs) => {
            let list: Vec<String> = cs
                .iter()
                .map(|c| {
                    let mut s = match &c.initial {
                        Some(i) => format!("{}: {} = {}", c.name.name, c.ty.name, expr(i)),
                        None => format!("{}: {}", c.name.name, c.ty.name),
                    };
                    if let Some((key, r)) = &c.rate {
                        s.push_str(&format!(", {} = {}", key.name, expr(r)));
                    }
                    s
                })
                .collect();
            format!("coordinates {};", list.join(", "))
        }
        StmtKind::Kinetic(e) => format!("kinetic = {};", expr(e)),
        StmtKind::Potential(e) => format!("potential = {};", expr(e)),
        StmtKind::Instance(i) => {
            instance(out, i, "    ");
            return;
        }
        StmtKind::For(l) => {
            let _ = writeln!(out, "    {} {{", loop_head(l));
            out.push_str(&indented(&indented(&stmts_text(&l.body))));
            out.push_str("    }\n");
            return;
        }
        StmtKind::When(c) => {
            let then = indented(&stmts_text(&c.then));
            let otherwise = indented(&stmts_text(&c.otherwise));
            cond_block(out, c, &then, &otherwise, "    ");
            return;
        }
        StmtKind::Error => return,
    };
    let _ = writeln!(out, "    {line}");
}

fn exprs(es: &[Expr]) -> String {
    es.iter().map(expr).collect::<Vec<_>>().join(", ")
}

/// Operands that are themselves operators get parentheses.
fn operand(e: &Expr) -> String {
    match e.kind {
        ExprKind::Neg(_) | ExprKind::Binary(..) | ExprKind::Compare(..) | ExprKind::If(..) => {
            format!("({})", expr(e))
        }
        _ => expr(e),
    }
}

/// fd source for one expression.
pub fn expr(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Number(n) => n.clone(),
        ExprKind::Str(s) => format!("\"{s}\""),
        ExprKind::Name(n) => n.clone(),
        ExprKind::List(items) => format!("[{}]", exprs(items)),
        ExprKind::Neg(x) => format!("-{}", operand(x)),
        ExprKind::Binary(op, a, b) => {
            let op = match op {
                BinOp::Add => "+",
                BinOp::Sub => "-",
                BinOp::Mul => "*",
                BinOp::Div => "/",
                BinOp::Pow => "^",
            };
            format!("{} {op} {}", operand(a), operand(b))
        }
        ExprKind::Compare(op, a, b) => {
            let op = match op {
                CmpOp::Lt => "<",
                CmpOp::Le => "<=",
                CmpOp::Gt => ">",
                CmpOp::Ge => ">=",
                CmpOp::Eq => "==",
                CmpOp::Ne => "!=",
            };
            format!("{} {op} {}", operand(a), operand(b))
        }
        ExprKind::If(c, a, b) => {
            format!("if {} then {} else {}", operand(c), operand(a), operand(b))
        }
        ExprKind::Call(n, args) => format!("{}({})", n.name, exprs(args)),
        ExprKind::Member(b, n) => format!("{}.{}", operand(b), n.name),
        ExprKind::Method(b, n, args) => format!("{}.{}({})", operand(b), n.name, exprs(args)),
        ExprKind::Index(b, i) => format!("{}[{}]", operand(b), expr(i)),
        // Never printed for a valid tree; keeps the output parseable otherwise.
        ExprKind::Error => "0".to_string(),
    }
}
