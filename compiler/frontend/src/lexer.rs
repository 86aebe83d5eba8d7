//! Tokens of the fd language (logos). Characters that start no token are reported
//! (E0001) and skipped, so lexing always reaches the end of the file.

use logos::Logos;
use std::fmt;

#[derive(Logos, Clone, Debug, PartialEq)]
#[logos(skip r"[ \t\r\n\f]+")]
// Ordinary comments (also `//~` test annotations); `///` is a doc comment.
// A comment ends at CR too: old-Mac text (lone CRs) must not become one long comment.
#[logos(skip r"//([^/\n\r][^\n\r]*)?")]
pub enum Tok {
    #[regex(r"///[^\n\r]*", |lex| lex.slice()[3..].trim().to_string())]
    Doc(String),

    #[token("param")]
    Param,
    #[token("input")]
    Input,
    #[token("fn")]
    Fn,
    #[token("use")]
    Use,
    #[token("gravity")]
    Gravity,
    #[token("body")]
    Body,
    #[token("joint")]
    Joint,
    #[token("force")]
    Force,
    #[token("driver")]
    Driver,
    #[token("sensor")]
    Sensor,
    #[token("element")]
    Element,
    #[token("let")]
    Let,
    #[token("constrain")]
    Constrain,
    #[token("apply")]
    Apply,
    #[token("torque")]
    Torque,
    #[token("body_torque")]
    BodyTorque,
    #[token("generalized")]
    Generalized,
    #[token("on")]
    On,
    #[token("at")]
    At,
    #[token("along")]
    Along,
    #[token("state")]
    State,
    #[token("output")]
    Output,
    #[token("coordinates")]
    Coordinates,
    #[token("kinetic")]
    Kinetic,
    #[token("potential")]
    Potential,
    #[token("simulate")]
    Simulate,
    #[token("spline")]
    Spline,
    #[token("shape")]
    Shape,
    #[token("if")]
    If,
    #[token("then")]
    Then,
    #[token("else")]
    Else,
    #[token("for")]
    For,
    #[token("in")]
    In,

    #[regex(r"[A-Za-z_][A-Za-z0-9_]*", |lex| lex.slice().to_string())]
    Ident(String),
    #[regex(r"[0-9]+(\.[0-9]*)?([eE][+-]?[0-9]+)?", |lex| lex.slice().to_string())]
    Num(String),
    #[regex(r#""[^"\n]*""#, |lex| { let s = lex.slice(); s[1..s.len() - 1].to_string() })]
    Str(String),
    /// A string without its closing quote on the same line.
    #[regex(r#""[^"\n]*"#)]
    UnterminatedStr,

    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token(",")]
    Comma,
    #[token(";")]
    Semi,
    #[token(":")]
    Colon,
    #[token(".")]
    Dot,
    #[token("..")]
    DotDot,
    #[token("=")]
    Assign,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    #[token("/")]
    Slash,
    #[token("^")]
    Caret,
    #[token("<")]
    Lt,
    #[token("<=")]
    Le,
    #[token(">")]
    Gt,
    #[token(">=")]
    Ge,
    #[token("==")]
    EqEq,
    #[token("!=")]
    Ne,
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Ident(s) => write!(f, "name `{s}`"),
            Tok::Num(s) => write!(f, "number `{s}`"),
            Tok::Str(s) => write!(f, "string \"{s}\""),
            Tok::Doc(_) => write!(f, "doc comment"),
            Tok::UnterminatedStr => write!(f, "unterminated string"),
            other => write!(f, "`{}`", other.text()),
        }
    }
}

impl Tok {
    /// Source text of a fixed token (keywords and punctuation).
    pub fn text(&self) -> &'static str {
        match self {
            Tok::Param => "param",
            Tok::Input => "input",
            Tok::Fn => "fn",
            Tok::Use => "use",
            Tok::Gravity => "gravity",
            Tok::Body => "body",
            Tok::Joint => "joint",
            Tok::Force => "force",
            Tok::Driver => "driver",
            Tok::Sensor => "sensor",
            Tok::Element => "element",
            Tok::Let => "let",
            Tok::Constrain => "constrain",
            Tok::Apply => "apply",
            Tok::Torque => "torque",
            Tok::BodyTorque => "body_torque",
            Tok::Generalized => "generalized",
            Tok::On => "on",
            Tok::At => "at",
            Tok::Along => "along",
            Tok::State => "state",
            Tok::Output => "output",
            Tok::Coordinates => "coordinates",
            Tok::Kinetic => "kinetic",
            Tok::Potential => "potential",
            Tok::Simulate => "simulate",
            Tok::Spline => "spline",
            Tok::Shape => "shape",
            Tok::If => "if",
            Tok::Then => "then",
            Tok::Else => "else",
            Tok::For => "for",
            Tok::In => "in",
            Tok::LParen => "(",
            Tok::RParen => ")",
            Tok::LBracket => "[",
            Tok::RBracket => "]",
            Tok::LBrace => "{",
            Tok::RBrace => "}",
            Tok::Comma => ",",
            Tok::Semi => ";",
            Tok::Colon => ":",
            Tok::Dot => ".",
            Tok::DotDot => "..",
            Tok::Assign => "=",
            Tok::Plus => "+",
            Tok::Minus => "-",
            Tok::Star => "*",
            Tok::Slash => "/",
            Tok::Caret => "^",
            Tok::Lt => "<",
            Tok::Le => "<=",
            Tok::Gt => ">",
            Tok::Ge => ">=",
            Tok::EqEq => "==",
            Tok::Ne => "!=",
            Tok::Ident(_) | Tok::Num(_) | Tok::Str(_) | Tok::Doc(_) | Tok::UnterminatedStr => "",
        }
    }
}

/// A character sequence that starts no token.
#[derive(Clone, Debug, PartialEq)]
pub enum LexError {
    BadChar {
        start: usize,
        end: usize,
    },
    Unterminated {
        start: usize,
        end: usize,
    },
    /// A statement nested deeper than [`MAX_NESTING`]; its tokens are dropped.
    TooDeep {
        start: usize,
        end: usize,
    },
}

/// Operators plus open brackets allowed in one statement. The checker recurses over
/// expressions; this bound keeps every input within a small, fixed stack.
pub const MAX_NESTING: usize = 1000;

/// A token and where it starts and ends (byte offsets), as the parser takes it.
pub type Token = (usize, Tok, usize);
/// A doc comment line: where it starts and ends, and its text.
pub type Doc = (usize, usize, String);

/// A lexed file: the tokens the parser sees, the doc comments beside them, and errors.
pub struct Lexed {
    pub tokens: Vec<Token>,
    pub docs: Vec<Doc>,
    pub errors: Vec<LexError>,
}

pub fn lex(text: &str) -> Lexed {
    let mut out = Lexed {
        tokens: Vec::new(),
        docs: Vec::new(),
        errors: Vec::new(),
    };
    let mut lexer = Tok::lexer(text);
    // A leading byte-order mark (editors and Windows tools write one) is no character.
    if text.starts_with('\u{feff}') {
        lexer.bump('\u{feff}'.len_utf8());
    }
    while let Some(tok) = lexer.next() {
        let span = lexer.span();
        match tok {
            Ok(Tok::Doc(d)) => out.docs.push((span.start, span.end, d)),
            Ok(Tok::UnterminatedStr) => out.errors.push(LexError::Unterminated {
                start: span.start,
                end: span.end,
            }),
            Ok(t) => push_token(&mut out.tokens, span.start, t, span.end),
            Err(()) => {
                // Merge a run of bad characters into one error, also across the
                // spaces between them (a line of `$ $ $` is one mistake, not a
                // million diagnostics).
                if let Some(LexError::BadChar { end, .. }) = out.errors.last_mut() {
                    let gap = text.get(*end..span.start).unwrap_or("x");
                    if gap.bytes().all(|b| b == b' ' || b == b'\t') {
                        *end = span.end;
                        continue;
                    }
                }
                out.errors.push(LexError::BadChar {
                    start: span.start,
                    end: span.end,
                })
            }
        }
    }
    limit_nesting(&mut out);
    out
}

/// Pushes a token; `0..N` lexes as the number `0.` and `.`, which this splits into
/// `0` and `..` (a range needs no fraction, and logos has no look-ahead).
fn push_token(tokens: &mut Vec<(usize, Tok, usize)>, start: usize, t: Tok, end: usize) {
    if t == Tok::Dot {
        if let Some((s, Tok::Num(n), e)) = tokens.last() {
            if *e == start && n.ends_with('.') {
                let (s, e) = (*s, *e);
                let digits = n[..n.len() - 1].to_string();
                tokens.pop();
                tokens.push((s, Tok::Num(digits), e - 1));
                tokens.push((e - 1, Tok::DotDot, end));
                return;
            }
        }
    }
    tokens.push((start, t, end));
}

/// Drops every run of tokens between statement boundaries (`;`, `{`, `}`) whose
/// operators and open brackets exceed [`MAX_NESTING`], and reports it.
fn limit_nesting(out: &mut Lexed) {
    let mut keep = Vec::with_capacity(out.tokens.len());
    let mut run: Vec<(usize, Tok, usize)> = Vec::new();
    let mut weight = 0usize;
    let flush = |run: &mut Vec<(usize, Tok, usize)>,
                 weight: &mut usize,
                 keep: &mut Vec<_>,
                 errors: &mut Vec<LexError>| {
        if *weight > MAX_NESTING {
            if let (Some(first), Some(last)) = (run.first(), run.last()) {
                errors.push(LexError::TooDeep {
                    start: first.0,
                    end: last.2,
                });
            }
            run.clear();
        } else {
            keep.append(run);
        }
        *weight = 0;
    };
    for t in std::mem::take(&mut out.tokens) {
        let boundary = matches!(t.1, Tok::Semi | Tok::LBrace | Tok::RBrace);
        if boundary {
            flush(&mut run, &mut weight, &mut keep, &mut out.errors);
            keep.push(t);
            continue;
        }
        if matches!(
            t.1,
            Tok::Plus
                | Tok::Minus
                | Tok::Star
                | Tok::Slash
                | Tok::Caret
                | Tok::LParen
                | Tok::LBracket
                | Tok::Dot
                | Tok::If
                | Tok::Lt
                | Tok::Le
                | Tok::Gt
                | Tok::Ge
                | Tok::EqEq
                | Tok::Ne
        ) {
            weight += 1;
        }
        run.push(t);
    }
    flush(&mut run, &mut weight, &mut keep, &mut out.errors);
    out.tokens = keep;
}
