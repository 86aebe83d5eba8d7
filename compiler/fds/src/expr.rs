//! Expressions of `ForceExpression` / `TorqueExpression`: numbers, `+ - * / ^ ( )`,
//! `PARVAL[name]`, `MEAVAL[name]`, `SPL[x, name]`, `SIMTIME[]` and the legacy smooth
//! step `STEP[x, x0, h0, x1, h1]`. Parsed into a tree whose names keep their spans
//! (checked against the blocks later) and printed as fd text.

use crate::error::{Error, Kind};
use std::ops::Range;

#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Num(String),
    /// `PARVAL[name]`, `MEAVAL[name]`: the name and its span in the file.
    Param(String, Range<usize>),
    Measure(String, Range<usize>),
    /// `SPL[x, name]`.
    Spline(String, Range<usize>, Box<Expr>),
    Time,
    Step(Vec<Expr>),
    Neg(Box<Expr>),
    Bin(char, Box<Expr>, Box<Expr>),
}

/// Deeper nesting is an error, not a stack overflow.
const MAX_DEPTH: usize = 100;

struct Parser<'a> {
    s: &'a [u8],
    text: &'a str,
    at: usize,
    base: usize,
    depth: usize,
}

/// Parses the value `text` found at byte offset `base` of the file.
pub fn parse(text: &str, base: usize) -> Result<Expr, Error> {
    let mut p = Parser {
        s: text.as_bytes(),
        text,
        at: 0,
        base,
        depth: 0,
    };
    if text.trim().is_empty() {
        return Err(p.err(0..0, "an empty expression", "expression expected"));
    }
    let e = p.sum()?;
    p.skip_ws();
    if p.at < p.s.len() {
        let rest = p.at..p.s.len();
        return Err(p.err(
            rest,
            "unexpected text after the expression",
            "not understood",
        ));
    }
    Ok(e)
}

impl Parser<'_> {
    fn err(&self, r: Range<usize>, msg: &str, label: &str) -> Error {
        Error::new(
            Kind::Syntax,
            self.base + r.start..self.base + r.end.max(r.start),
            format!("expression: {msg}"),
            label,
            "expressions use numbers, + - * / ^ ( ), PARVAL[name], MEAVAL[name], \
             SPL[x, name], SIMTIME[] and STEP[x, x0, h0, x1, h1]",
        )
    }

    fn skip_ws(&mut self) {
        while self.at < self.s.len() && self.s[self.at].is_ascii_whitespace() {
            self.at += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.skip_ws();
        if self.s.get(self.at) == Some(&c) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn here(&self) -> Range<usize> {
        let end = self.text[self.at..]
            .char_indices()
            .nth(1)
            .map_or(self.s.len(), |(i, _)| self.at + i);
        self.at..end
    }

    fn sum(&mut self) -> Result<Expr, Error> {
        let mut e = self.prod()?;
        loop {
            let op = if self.eat(b'+') {
                '+'
            } else if self.eat(b'-') {
                '-'
            } else {
                return Ok(e);
            };
            e = Expr::Bin(op, Box::new(e), Box::new(self.prod()?));
        }
    }

    fn prod(&mut self) -> Result<Expr, Error> {
        let mut e = self.unary()?;
        loop {
            let op = if self.eat(b'*') {
                '*'
            } else if self.eat(b'/') {
                '/'
            } else {
                return Ok(e);
            };
            e = Expr::Bin(op, Box::new(e), Box::new(self.unary()?));
        }
    }

    fn unary(&mut self) -> Result<Expr, Error> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err(self.here(), "nested too deeply", "too deep"));
        }
        let e = if self.eat(b'-') {
            Expr::Neg(Box::new(self.unary()?))
        } else if self.eat(b'+') {
            self.unary()?
        } else {
            let a = self.atom()?;
            if self.eat(b'^') {
                Expr::Bin('^', Box::new(a), Box::new(self.unary()?))
            } else {
                a
            }
        };
        self.depth -= 1;
        Ok(e)
    }

    fn atom(&mut self) -> Result<Expr, Error> {
        self.skip_ws();
        let start = self.at;
        match self.s.get(self.at) {
            None => Err(self.err(start..start, "ends too early", "operand expected")),
            Some(b'(') => {
                self.at += 1;
                let e = self.sum()?;
                if !self.eat(b')') {
                    return Err(self.err(self.here(), "`(` without `)`", "`)` expected"));
                }
                Ok(e)
            }
            Some(c) if c.is_ascii_digit() || *c == b'.' => self.number(),
            Some(c) if c.is_ascii_alphabetic() => self.call(),
            Some(_) => Err(self.err(self.here(), "unexpected character", "operand expected")),
        }
    }

    fn number(&mut self) -> Result<Expr, Error> {
        let start = self.at;
        let digits = |p: &mut Self| {
            while p.s.get(p.at).is_some_and(u8::is_ascii_digit) {
                p.at += 1;
            }
        };
        digits(self);
        if self.s.get(self.at) == Some(&b'.') {
            self.at += 1;
            digits(self);
        }
        if matches!(self.s.get(self.at), Some(b'e' | b'E')) {
            let save = self.at;
            self.at += 1;
            if matches!(self.s.get(self.at), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if self.s.get(self.at).is_some_and(u8::is_ascii_digit) {
                digits(self);
            } else {
                self.at = save;
            }
        }
        let t = &self.text[start..self.at];
        match t.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(Expr::Num(fd_number(t))),
            _ => Err(self.err(start..self.at, "not a number", "bad number")),
        }
    }

    /// `NAME[ ... ]`.
    fn call(&mut self) -> Result<Expr, Error> {
        let start = self.at;
        while self
            .s
            .get(self.at)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
        {
            self.at += 1;
        }
        let name = self.text[start..self.at].to_string();
        let name_span = start..self.at;
        if !self.eat(b'[') {
            return Err(self.err(
                name_span,
                &format!("`{name}` is not a number or a function"),
                "unknown name",
            ));
        }
        match name.as_str() {
            "PARVAL" | "MEAVAL" => {
                let (arg, span) = self.raw_name()?;
                let span = self.base + span.start..self.base + span.end;
                Ok(if name == "PARVAL" {
                    Expr::Param(arg, span)
                } else {
                    Expr::Measure(arg, span)
                })
            }
            "SIMTIME" => {
                if !self.eat(b']') {
                    return Err(self.err(self.here(), "`SIMTIME[]` takes nothing", "`]` expected"));
                }
                Ok(Expr::Time)
            }
            "SPL" => {
                let x = self.sum()?;
                if !self.eat(b',') {
                    return Err(self.err(
                        self.here(),
                        "`SPL[x, name]` needs a spline name",
                        "`,` expected",
                    ));
                }
                let (arg, span) = self.raw_name()?;
                let span = self.base + span.start..self.base + span.end;
                Ok(Expr::Spline(arg, span, Box::new(x)))
            }
            "STEP" => {
                let mut args = vec![self.sum()?];
                while self.eat(b',') {
                    args.push(self.sum()?);
                }
                if !self.eat(b']') || args.len() != 5 {
                    return Err(self.err(
                        name_span,
                        "`STEP[x, x0, h0, x1, h1]` takes five arguments",
                        "bad STEP",
                    ));
                }
                Ok(Expr::Step(args))
            }
            _ => Err(self.err(
                name_span,
                &format!("unknown function `{name}[...]`"),
                "not supported",
            )),
        }
    }

    /// The text up to `]` (trimmed), for names, which may hold spaces.
    fn raw_name(&mut self) -> Result<(String, Range<usize>), Error> {
        let Some(len) = self.text[self.at..].find(']') else {
            return Err(self.err(self.at..self.s.len(), "`[` without `]`", "`]` expected"));
        };
        let inner = &self.text[self.at..self.at + len];
        let lead = inner.len() - inner.trim_start().len();
        let name = inner.trim().to_string();
        let span = self.at + lead..self.at + lead + name.len();
        self.at += len + 1;
        if name.is_empty() {
            return Err(self.err(span, "an empty name", "name expected"));
        }
        Ok((name, span))
    }
}

/// A number as fd writes it: fd numbers need a digit before the point.
fn fd_number(t: &str) -> String {
    if t.starts_with('.') {
        format!("0{t}")
    } else {
        t.to_string()
    }
}

/// How tightly an expression binds in fd (higher binds tighter).
fn prec(e: &Expr) -> u8 {
    match e {
        Expr::Bin('+' | '-', ..) => 1,
        Expr::Bin('*' | '/', ..) => 2,
        Expr::Neg(_) => 3,
        Expr::Bin(..) => 4,
        _ => 5,
    }
}

/// Prints fd text; `name` turns a reference into fd text (an identifier or a call).
pub fn print(e: &Expr, name: &mut dyn FnMut(&Expr) -> String) -> String {
    let mut s = String::new();
    write(e, 0, name, &mut s);
    s
}

fn write(e: &Expr, min: u8, name: &mut dyn FnMut(&Expr) -> String, s: &mut String) {
    let paren = prec(e) < min;
    if paren {
        s.push('(');
    }
    match e {
        Expr::Num(t) => s.push_str(t),
        Expr::Param(..) | Expr::Measure(..) => s.push_str(&name(e)),
        Expr::Time => s.push('t'),
        Expr::Spline(_, _, x) => {
            s.push_str(&name(e));
            s.push('(');
            write(x, 0, name, s);
            s.push(')');
        }
        Expr::Step(args) => {
            s.push_str("step(");
            for (i, a) in args.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                write(a, 0, name, s);
            }
            s.push(')');
        }
        Expr::Neg(x) => {
            s.push('-');
            write(x, 3, name, s);
        }
        Expr::Bin(op, a, b) => {
            let p = prec(e);
            let (l, r) = if *op == '^' { (5, 3) } else { (p, p + 1) };
            write(a, l, name, s);
            s.push_str(&format!(" {op} "));
            write(b, r, name, s);
        }
    }
    if paren {
        s.push(')');
    }
}

/// Every reference in `e`, depth first.
pub fn refs<'a>(e: &'a Expr, out: &mut Vec<&'a Expr>) {
    match e {
        Expr::Param(..) | Expr::Measure(..) => out.push(e),
        Expr::Spline(_, _, x) => {
            out.push(e);
            refs(x, out);
        }
        Expr::Step(args) => args.iter().for_each(|a| refs(a, out)),
        Expr::Neg(x) => refs(x, out),
        Expr::Bin(_, a, b) => {
            refs(a, out);
            refs(b, out);
        }
        Expr::Num(_) | Expr::Time => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fd(s: &str) -> String {
        let e = parse(s, 0).unwrap();
        print(&e, &mut |r| match r {
            Expr::Param(n, _) | Expr::Measure(n, _) | Expr::Spline(n, _, _) => n.clone(),
            _ => unreachable!(),
        })
    }

    #[test]
    fn precedence_survives_printing() {
        assert_eq!(fd("-PARVAL[k]*MEAVAL[x]"), "-k * x");
        assert_eq!(fd("(1+2)*3"), "(1 + 2) * 3");
        assert_eq!(fd("1-(2-3)"), "1 - (2 - 3)");
        assert_eq!(fd("2^3^2"), "2 ^ 3 ^ 2");
        assert_eq!(fd("(2^3)^2"), "(2 ^ 3) ^ 2");
        assert_eq!(fd("-2^2"), "-2 ^ 2");
        assert_eq!(fd("(-2)^2"), "(-2) ^ 2");
        assert_eq!(fd("SPL[SIMTIME[]*2, s]"), "s(t * 2)");
        assert_eq!(
            fd("STEP[SIMTIME[], 0, 0, .5, 1e3]"),
            "step(t, 0, 0, 0.5, 1e3)"
        );
    }

    #[test]
    fn errors_point_into_the_value() {
        let e = parse("1 + FOO[2]", 10).unwrap_err();
        assert_eq!(e.span, 14..17);
        let e = parse("(1 + 2", 0).unwrap_err();
        assert!(e.message.contains("without `)`"), "{}", e.message);
        let deep = "(".repeat(500) + "1" + &")".repeat(500);
        assert!(parse(&deep, 0).is_err());
    }
}
