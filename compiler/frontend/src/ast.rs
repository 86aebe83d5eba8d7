//! The syntax tree. Every node carries a [`Span`] (file id + byte offsets) so that
//! diagnostics and the language server can point at source text.

use serde::Serialize;

/// Index of a file in [`crate::SourceFiles`].
pub type FileId = usize;

/// A byte range `start..end` in one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Span {
    pub file: FileId,
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(file: FileId, start: usize, end: usize) -> Span {
        Span {
            file,
            start: start as u32,
            end: end as u32,
        }
    }
    pub fn range(&self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// A name with its place in the source.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// One parsed file.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Module {
    pub file: FileId,
    pub items: Vec<Item>,
    /// When the parser had to skip text: every name that follows a declaring keyword
    /// anywhere in the file. A use of such a name may refer to a declaration that was
    /// lost to the syntax error, so it is not reported as unknown.
    pub maybe_declared: Vec<String>,
}

/// The six kinds of instance and element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Kind {
    Body,
    Joint,
    Force,
    Driver,
    Sensor,
    Element,
}

impl Kind {
    pub fn keyword(self) -> &'static str {
        match self {
            Kind::Body => "body",
            Kind::Joint => "joint",
            Kind::Force => "force",
            Kind::Driver => "driver",
            Kind::Sensor => "sensor",
            Kind::Element => "element",
        }
    }
}

/// `param`/`input` declaration (top level or inside a type).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ParamDecl {
    pub doc: Option<String>,
    pub name: Ident,
    pub ty: Option<Ident>,
    pub default: Option<Expr>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FnDecl {
    pub doc: Option<String>,
    pub name: Ident,
    pub args: Vec<(Ident, Ident)>,
    pub ret: Option<Ident>,
    pub body: Expr,
    pub span: Span,
}

/// `name = expr;` inside an instance or `simulate` block.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Field {
    pub name: Ident,
    pub value: Expr,
    pub span: Span,
}

/// `KIND NAME: TYPE(connections) { field = expr; ... }`
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Instance {
    pub doc: Option<String>,
    pub kind: Kind,
    pub name: Ident,
    /// `crank[i]`, `cell[i][j]`: one expression per bracket (empty for a plain name).
    /// The expansion of loops ([`crate::expand`]) turns them into the name `crank[3]`.
    pub index: Vec<Expr>,
    pub ty: Ident,
    pub connections: Vec<Expr>,
    /// Span of the connection list (or of the type name when there is none).
    pub connections_span: Span,
    pub fields: Vec<Field>,
    /// The parser skipped a broken field inside the braces.
    pub recovered: bool,
    pub span: Span,
}

/// `shape box on crank { size = [0.1, 0.02, 0.02]; colour = [0.8, 0.2, 0.2]; }`: a
/// display shape in the frame of a body (kinds and fields: `SHAPE_KINDS` in the checker).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ShapeDecl {
    pub kind: Ident,
    pub body: Expr,
    pub fields: Vec<Field>,
    pub span: Span,
}

/// A connection parameter of an element type: `b2: body = ground`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ConnParam {
    pub name: Ident,
    pub ty: Ident,
    pub default: Option<Expr>,
}

/// `KIND NAME(connections) { statements }`
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TypeDef {
    pub doc: Option<String>,
    pub kind: Kind,
    pub name: Ident,
    pub connections: Vec<ConnParam>,
    pub body: Vec<Stmt>,
    pub span: Span,
}

impl TypeDef {
    /// For the element type of a one-off element `KIND NAME: on(BODIES) { ... }` (the
    /// parser names it `on@NAME`, which source text cannot): NAME.
    pub fn inline_instance(&self) -> Option<&str> {
        self.name.name.strip_prefix("on@")
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SplineDecl {
    pub doc: Option<String>,
    pub name: Ident,
    /// `akima`, `zcc` or `table`.
    pub method: Ident,
    pub args: Vec<Expr>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Item {
    Use {
        path: String,
        span: Span,
    },
    Param(ParamDecl),
    Input(ParamDecl),
    Fn(FnDecl),
    Gravity {
        value: Expr,
        span: Span,
    },
    Output {
        name: Ident,
        /// `output tip[i] = ...;` inside a loop: the channel `tip[3]` (empty after
        /// expansion, which writes the index into the name).
        index: Vec<Expr>,
        value: Expr,
        span: Span,
    },
    Simulate {
        settings: Vec<Field>,
        span: Span,
    },
    Spline(SplineDecl),
    /// `shape KIND on BODY { fields }`: display geometry for `fdc view`, no part of the
    /// model's equations (the lowering keeps it beside the model).
    Shape(ShapeDecl),
    Instance(Instance),
    TypeDef(TypeDef),
    /// `for i in A..B { items }`: expanded before checking (no later phase sees it).
    For(Loop<Item>),
    /// `if COND { items } else { items }` with a build-time condition: expanded too.
    When(Cond<Item>),
    /// Text the parser skipped after a syntax error.
    Error(Span),
}

/// `for VAR in FROM..TO { body }`: VAR takes the integers FROM, FROM+1, ..., TO-1.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Loop<T> {
    pub var: Ident,
    pub from: Expr,
    pub to: Expr,
    pub body: Vec<T>,
    pub span: Span,
}

/// `if COND { then } else { otherwise }` around items or statements; COND is known
/// when the model is built (loop indices, model parameters, fields of the instance).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Cond<T> {
    pub cond: Expr,
    pub then: Vec<T>,
    pub otherwise: Vec<T>,
    pub span: Span,
}

impl Item {
    pub fn span(&self) -> Span {
        match self {
            Item::Use { span, .. }
            | Item::Gravity { span, .. }
            | Item::Output { span, .. }
            | Item::Simulate { span, .. }
            | Item::Error(span) => *span,
            Item::Param(p) | Item::Input(p) => p.span,
            Item::Fn(f) => f.span,
            Item::Spline(s) => s.span,
            Item::Shape(s) => s.span,
            Item::Instance(i) => i.span,
            Item::TypeDef(t) => t.span,
            Item::For(l) => l.span,
            Item::When(c) => c.span,
        }
    }
}

/// A coordinate of a vector-space element: `x: vec3 = x0` and optionally its initial
/// rate, `x: scalar = x0, rate = v0` (the key as written: the checker wants `rate`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Coordinate {
    pub name: Ident,
    pub ty: Ident,
    pub initial: Option<Expr>,
    pub rate: Option<(Ident, Expr)>,
}

/// An entry of a `coordinates` list: a coordinate, or `KEY = EXPR` for the one before
/// (a helper of the grammar).
pub enum CoordinateItem {
    Coordinate(Coordinate),
    Rate(Ident, Expr),
}

/// The coordinates of a `coordinates` list, each `rate = ...` given to the coordinate
/// before it.
pub fn coordinate_list(first: Coordinate, rest: Vec<CoordinateItem>) -> Vec<Coordinate> {
    let mut v = vec![first];
    for item in rest {
        match item {
            CoordinateItem::Coordinate(c) => v.push(c),
            CoordinateItem::Rate(key, e) => {
                if let Some(last) = v.last_mut() {
                    last.rate = Some((key, e));
                }
            }
        }
    }
    v
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum StmtKind {
    Param(ParamDecl),
    Let {
        name: Ident,
        ty: Option<Ident>,
        value: Expr,
    },
    Constrain(Expr),
    /// `apply force F on b at u;` (`at` omitted: the body's reference point, u = 0).
    ApplyForce {
        force: Expr,
        body: Expr,
        at: Option<Expr>,
    },
    ApplyTorque {
        torque: Expr,
        body: Expr,
    },
    ApplyBodyTorque {
        torque: Expr,
        body: Expr,
    },
    ApplyGeneralized {
        value: Expr,
        along: Expr,
    },
    State {
        name: Ident,
        value: Expr,
    },
    Output {
        name: Ident,
        value: Expr,
    },
    /// `coordinates rigid(position, orientation, velocity, angular_velocity);`
    CoordinatesGroup {
        group: Ident,
        args: Vec<Expr>,
    },
    Coordinates(Vec<Coordinate>),
    Kinetic(Expr),
    Potential(Expr),
    Instance(Instance),
    /// `for` and `if` around statements of an element type: expanded per instance.
    For(Loop<Stmt>),
    When(Cond<Stmt>),
    Error,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Pow,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum CmpOp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum ExprKind {
    /// The literal text is kept so that printing round-trips exactly.
    Number(String),
    Str(String),
    Name(String),
    /// `[a, b, c]`: vec3 of scalars, mat3 of three vec3 rows, or a list (spline data).
    List(Vec<Expr>),
    Neg(Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Compare(CmpOp, Box<Expr>, Box<Expr>),
    If(Box<Expr>, Box<Expr>, Box<Expr>),
    Call(Ident, Vec<Expr>),
    Member(Box<Expr>, Ident),
    Method(Box<Expr>, Ident, Vec<Expr>),
    /// `a[i]`: an element of an array or an indexed instance (build-time index).
    Index(Box<Expr>, Box<Expr>),
    /// A place where the parser recovered from a syntax error.
    Error,
}

/// What follows `param`/`input`: a helper of the grammar.
pub struct ParamRest {
    pub name: Ident,
    pub ty: Option<Ident>,
    pub default: Option<Expr>,
}

impl ParamRest {
    pub fn into_decl(self, span: Span) -> ParamDecl {
        ParamDecl {
            doc: None,
            name: self.name,
            ty: self.ty,
            default: self.default,
            span,
        }
    }
}
