//! Spline declarations of the model into IR spline tables: literal points (Akima or
//! zero-clamped) and `table(...)` files read relative to the model file.

use super::*;

impl<'a> Lowering<'a> {
    /// Computes the table of a spline declaration into the globals (or reports why not).
    pub(super) fn spline_decl(&mut self, decl: &SplineDecl, files: Option<&SourceFiles>) {
        let method = decl.method.name.as_str();
        let table = match method {
            "akima" | "zcc" => self.inline_spline(decl, method),
            "table" => self.file_spline(decl, files),
            _ => None, // reported by the checker
        };
        match table {
            Some(t) => {
                self.globals.splines.insert(decl.name.name.clone(), t);
            }
            None => {
                self.globals.broken_splines.insert(decl.name.name.clone());
            }
        }
    }

    pub(super) fn spline_error(
        &mut self,
        code: &'static str,
        span: Span,
        msg: String,
        label: &str,
        hint: &str,
    ) {
        self.errors.push(LowerError {
            span: Some(span),
            message: msg,
            code: Some(code),
            label: Some(label.to_string()),
            hint: Some(hint.to_string()),
            warning: false,
        });
    }

    /// `akima([x...], [y...])` / `zcc(...)`: the list items evaluated as numbers.
    pub(super) fn inline_spline(
        &mut self,
        decl: &SplineDecl,
        method: &str,
    ) -> Option<fdc_ir::SplineTable> {
        let mut cols: Vec<(Vec<f64>, Vec<Span>)> = Vec::new();
        for a in decl.args.iter().take(2) {
            let ExprKind::List(items) = &a.kind else {
                return None; // reported by the checker
            };
            let mut vals = Vec::new();
            for it in items {
                match self.numeric(it).as_deref() {
                    Some([v]) => vals.push(*v),
                    Some(_) => {
                        self.err(it.span, "spline data are scalars");
                        return None;
                    }
                    None => return None,
                }
            }
            cols.push((vals, items.iter().map(|i| i.span).collect()));
        }
        let [(xs, xspans), (ys, yspans)] = &cols[..] else {
            return None;
        };
        let name = &decl.name.name;
        match spline::table(method, xs, ys) {
            Ok(t) => Some(t),
            Err(e) => {
                let (code, span, msg, label, hint) = match e {
                    spline::DataError::NotIncreasing(i) => (
                        "E0914",
                        xspans[i],
                        format!(
                            "the x values of spline `{name}` do not increase: x[{i}] = {} after {}",
                            xs[i],
                            xs[i - 1]
                        ),
                        "not greater than the x before it",
                        "the x values of a spline must be strictly increasing",
                    ),
                    spline::DataError::NotFinite(i) => (
                        "E0911",
                        if xs[i].is_finite() {
                            yspans[i]
                        } else {
                            xspans[i]
                        },
                        format!("point {i} of spline `{name}` is not a finite number"),
                        "not finite",
                        "spline data must be finite numbers",
                    ),
                    spline::DataError::TooFew(n) => (
                        "E0913",
                        decl.span,
                        format!("spline `{name}` has {n} point(s)"),
                        "too few points",
                        "a spline needs at least 2 points",
                    ),
                    spline::DataError::Other(m) => (
                        "E0914",
                        decl.span,
                        m,
                        "invalid spline",
                        "x values this close cannot carry a cubic piece; spread them out",
                    ),
                };
                self.spline_error(code, span, msg, label, hint);
                None
            }
        }
    }

    /// `table("file", xcol, ycol [, header_lines])`: the points read from the file.
    pub(super) fn file_spline(
        &mut self,
        decl: &SplineDecl,
        files: Option<&SourceFiles>,
    ) -> Option<fdc_ir::SplineTable> {
        let args = &decl.args;
        let ExprKind::Str(file) = &args.first()?.kind else {
            return None; // reported by the checker
        };
        // The call `table(...)`: from the method name to the last argument.
        let call = Span::new(
            decl.method.span.file,
            decl.method.span.start as usize,
            args.last().map_or(decl.span.end, |a| a.span.end) as usize + 1,
        );
        let whole = |this: &mut Self, a: &Expr, what: &str| -> Option<usize> {
            let text = match &a.kind {
                ExprKind::Number(t) => t.as_str(),
                _ => return None,
            };
            match text.parse::<usize>() {
                Ok(n) => Some(n),
                Err(_) => {
                    this.spline_error(
                        "E0912",
                        a.span,
                        format!("the {what} of `table` must be a whole number, found `{text}`"),
                        "not a whole number",
                        "columns are counted from 0; the header line count is a whole number",
                    );
                    None
                }
            }
        };
        let xcol = whole(self, args.get(1)?, "x column")?;
        let ycol = whole(self, args.get(2)?, "y column")?;
        let header = match args.get(3) {
            Some(a) => whole(self, a, "header line count")?,
            None => 0,
        };
        let (path, text) = self.read_table_file(decl, call, file, files)?;
        self.table_from_text(decl, call, &path, &text, (xcol, ycol, header))
    }

    /// The text of a `table` file, read relative to the model file's directory.
    fn read_table_file(
        &mut self,
        decl: &SplineDecl,
        call: Span,
        file: &str,
        files: Option<&SourceFiles>,
    ) -> Option<(std::path::PathBuf, String)> {
        let Some(model) = files.and_then(|f| f.path(decl.span.file)) else {
            self.spline_error(
                "E0910",
                call,
                format!("cannot read table `{file}`: the location of the model file is unknown"),
                "table file relative to an unknown directory",
                "build the model from a file, so relative table paths can be resolved",
            );
            return None;
        };
        let dir = model.parent().unwrap_or(std::path::Path::new(""));
        let path = dir.join(file);
        // Through the front end's one safe reader: a FIFO or device is refused, not read.
        let text =
            match fdc_frontend::source::read_text(&path, fdc_frontend::source::MAX_DATA_BYTES) {
                Ok(t) => t,
                Err(e) => {
                    self.spline_error(
                        "E0910",
                        call,
                        format!("cannot read table `{}`: {e}", path.display()),
                        "this table file",
                        &format!(
                            "the path is relative to the model file's directory (`{}`)",
                            if dir.as_os_str().is_empty() {
                                ".".to_string()
                            } else {
                                dir.display().to_string()
                            }
                        ),
                    );
                    return None;
                }
            };
        Some((path, text))
    }

    /// The Akima spline through the (x, y) columns of a table file's text.
    fn table_from_text(
        &mut self,
        decl: &SplineDecl,
        call: Span,
        path: &std::path::Path,
        text: &str,
        (xcol, ycol, header): (usize, usize, usize),
    ) -> Option<fdc_ir::SplineTable> {
        let args = &decl.args;
        let shown = path.display().to_string();
        let (xs, ys, lines) = match spline::read_table(text, xcol, ycol, header) {
            Ok(p) => p,
            Err(spline::TableError::Column { line, col, found }) => {
                let arg = if col == xcol { &args[1] } else { &args[2] };
                self.spline_error(
                    "E0912",
                    arg.span,
                    format!("line {line} of `{shown}` has {found} column(s), no column {col}"),
                    "column out of range",
                    "columns are counted from 0; every data line needs both columns",
                );
                return None;
            }
            Err(spline::TableError::Number { line, col, text }) => {
                self.spline_error(
                    "E0911",
                    call,
                    format!("line {line}, column {col} of `{shown}`: `{text}` is not a finite number"),
                    "reading this table",
                    "the header line count (4th argument) skips leading text lines; `#` starts a comment line",
                );
                return None;
            }
        };
        match spline::table("akima", &xs, &ys) {
            Ok(t) => Some(t),
            Err(spline::DataError::TooFew(n)) => {
                self.spline_error(
                    "E0913",
                    call,
                    format!("table `{shown}` has {n} data line(s)"),
                    "too few points",
                    "a spline needs at least 2 points",
                );
                None
            }
            Err(spline::DataError::NotIncreasing(i)) => {
                self.spline_error(
                    "E0914",
                    call,
                    format!(
                        "the x values of `{shown}` do not increase: line {} has x = {} after {}",
                        lines[i],
                        xs[i],
                        xs[i - 1]
                    ),
                    "reading this table",
                    "the x column of a table must be strictly increasing (sorted, no repeats)",
                );
                None
            }
            Err(e) => {
                let why = match e {
                    spline::DataError::Other(m) => m,
                    other => format!("{other:?}"),
                };
                self.spline_error(
                    "E0914",
                    call,
                    format!("table `{shown}`: {why}"),
                    "reading this table",
                    "x values this close cannot carry a cubic piece; thin out the table",
                );
                None
            }
        }
    }
}
