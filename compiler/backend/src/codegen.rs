//! IR → LLVM IR. One LLVM function per [`Func`], one LLVM value per needed IR node,
//! emitted in id order (ids are topological), so the work is linear in the DAG size.
//!
//! Floating point: no fast-math flag anywhere, and no `llvm.fmuladd`, so the code
//! generator never contracts a multiply-add into an FMA (LLVM's default
//! `-fp-contract` for the C API target machine only fuses `fmuladd`). Every arithmetic
//! node therefore rounds exactly like the interpreter. Elementary functions call the
//! same libm the interpreter calls (`sin`, `cos`, `exp`, `log` through LLVM's
//! intrinsics, `pow`, `tan`, `tanh`, `atan2` directly); `sqrt` and `fabs` are exact
//! instructions. `pow` is declared `nobuiltin`: LLVM's library-call simplifier would
//! otherwise rewrite `pow(x, 2)` into `x*x`, `pow(x, 0.5)` into `sqrt` or `pow(2, x)`
//! into `exp2` at level 1 and above but not at level 0, which may move a result by
//! one ulp; tiered compilation needs every level to compute the same bits. `powi` is expanded into the square-and-multiply chain of the
//! compiler runtime's `__powidf2`, multiplication for multiplication.
//!
//! A spline node becomes private constant globals of raw `f64` bytes (the table's knots, and per
//! derivative order the pieces' bases and Horner coefficients, both computed by
//! `fdc_ir::spline` exactly as the interpreter uses them), the branch-free search of
//! `fdc_ir::spline::search_steps` unrolled into integer selects, and the same Horner
//! chain as the interpreter. Still straight-line code.

use crate::llvm14;
use crate::BackendError;
use fdc_ir::spline::{search_steps, SplineTable};
use fdc_ir::verify::{verify_func, Stage};
use fdc_ir::{Cmp, Func, Graph, Id, Op, Unary};
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::builder::Builder;
use inkwell::context::Context;
use inkwell::intrinsics::Intrinsic;
use inkwell::module::{Linkage, Module};
use inkwell::values::{FloatValue, FunctionValue, IntValue, PointerValue};
use inkwell::FloatPredicate;
use std::collections::HashMap;

/// The symbol of the k-th function of the module whose cache key is `key`. Indices,
/// not user names: names may repeat or contain anything. The key's first 16 bytes make
/// the symbols of different modules distinct, so the objects of every element type of
/// a model load into one JIT ([`crate::SharedJit`]) without clashing.
pub fn symbol(key: &crate::cache::Key, k: usize) -> String {
    let tag: String = key[..16].iter().map(|b| format!("{b:02x}")).collect();
    format!("fdc_{tag}_{k}")
}

/// The nodes one function needs, in increasing id order, after the IR verifier has
/// checked that every one of them can be compiled.
pub fn plan(graph: &Graph, func: &Func) -> Result<Vec<Id>, BackendError> {
    verify_func(graph, func, Stage::Compiled).map_err(|e| BackendError::InvalidIr {
        func: func.name.clone(),
        msg: e.message,
    })?;
    Ok(graph.cone(&func.outputs))
}

/// Builds the LLVM module of all functions (`plans[k]` is `plan(graph, &funcs[k])`).
pub fn emit<'ctx>(
    ctx: &'ctx Context,
    graph: &Graph,
    funcs: &[Func],
    plans: &[Vec<Id>],
    key: &crate::cache::Key,
) -> Result<Module<'ctx>, BackendError> {
    let module = ctx.create_module("fdc");
    let builder = ctx.create_builder();
    let lib = Libm::declare(ctx, &module)?;
    let f64t = ctx.f64_type();
    let ptr = llvm14::f64_ptr_type(ctx);
    let fn_type = ctx.void_type().fn_type(&[ptr.into(); 9], false);
    let nounwind = ctx.create_enum_attribute(Attribute::get_named_enum_kind_id("nounwind"), 0);
    let mut values: Vec<Option<FloatValue>> = vec![None; graph.len()];
    let mut globals = SplineGlobals::default();
    for (k, (func, nodes)) in funcs.iter().zip(plans).enumerate() {
        let f = module.add_function(&symbol(key, k), fn_type, Some(Linkage::External));
        f.add_attribute(AttributeLoc::Function, nounwind);
        let entry = ctx.append_basic_block(f, "entry");
        builder.position_at_end(entry);
        let e = Emitter {
            ctx,
            b: &builder,
            lib: &lib,
            f,
        };
        let err = |msg: String| BackendError::Llvm(format!("{}: {msg}", func.name));
        for &id in nodes {
            let op = graph.op(id);
            let val = |a: Id| values[a.index()].expect("operands precede their users");
            let v = match op {
                Op::Const(bits) => Ok(f64t.const_float(f64::from_bits(bits))),
                Op::Input(slot, index) => e.input(slot as u32, index),
                Op::Sym(_) => unreachable!("rejected by plan"),
                Op::Unary(u, a) => e.unary(u, val(a)),
                Op::Add(a, b) => {
                    e.b.build_float_add(val(a), val(b), "")
                        .map_err(|x| x.to_string())
                }
                Op::Sub(a, b) => {
                    e.b.build_float_sub(val(a), val(b), "")
                        .map_err(|x| x.to_string())
                }
                Op::Mul(a, b) => {
                    e.b.build_float_mul(val(a), val(b), "")
                        .map_err(|x| x.to_string())
                }
                Op::Div(a, b) => {
                    e.b.build_float_div(val(a), val(b), "")
                        .map_err(|x| x.to_string())
                }
                Op::Powi(a, n) => e.powi(val(a), n),
                Op::Pow(a, b) => llvm14::call_f64(e.b, lib.pow, &[val(a), val(b)]),
                Op::Atan2(y, x) => llvm14::call_f64(e.b, lib.atan2, &[val(y), val(x)]),
                Op::Min(a, b) => e.min_max(val(a), val(b), FloatPredicate::OLT),
                Op::Max(a, b) => e.min_max(val(a), val(b), FloatPredicate::OGT),
                Op::Select(cmp, [a, b, t, fl]) => e.select(cmp, val(a), val(b), val(t), val(fl)),
                Op::Spline(t, d, x) => {
                    let table = graph.table(t).expect("checked by plan");
                    let (knots, coefs) = globals.get(ctx, &module, t, d, table);
                    e.spline(table, d, knots, coefs, val(x))
                }
            }
            .map_err(err)?;
            values[id.index()] = Some(v);
        }
        let out = f
            .get_nth_param(8)
            .expect("9 parameters")
            .into_pointer_value();
        for (j, o) in func.outputs.iter().enumerate() {
            let v = values[o.index()].expect("outputs are planned");
            llvm14::store_f64(ctx, &builder, out, j as u32, v).map_err(err)?;
        }
        builder.build_return(None).map_err(|x| err(x.to_string()))?;
        for &id in nodes {
            values[id.index()] = None;
        }
    }
    if cfg!(debug_assertions) {
        module
            .verify()
            .map_err(|m| BackendError::Llvm(format!("LLVM verifier: {m}")))?;
    }
    Ok(module)
}

/// The constant globals of the spline tables one module uses: knots per table,
/// coefficients per (table, derivative order).
#[derive(Default)]
struct SplineGlobals<'ctx> {
    knots: HashMap<u32, PointerValue<'ctx>>,
    coefs: HashMap<(u32, u8), PointerValue<'ctx>>,
}

impl<'ctx> SplineGlobals<'ctx> {
    fn get(
        &mut self,
        ctx: &'ctx Context,
        module: &Module<'ctx>,
        t: u32,
        d: u8,
        table: &SplineTable,
    ) -> (PointerValue<'ctx>, PointerValue<'ctx>) {
        let constant =
            |name: String, vals: &[f64]| llvm14::f64_data_global(ctx, module, &name, vals);
        let knots = *self
            .knots
            .entry(t)
            .or_insert_with(|| constant(format!("spline{t}_knots"), table.knots()));
        let coefs = *self.coefs.entry((t, d)).or_insert_with(|| {
            let flat: Vec<f64> = table.coefficients(d).into_iter().flatten().collect();
            constant(format!("spline{t}_d{d}"), &flat)
        });
        (knots, coefs)
    }
}

/// The declared elementary functions of one module.
struct Libm<'ctx> {
    sqrt: FunctionValue<'ctx>,
    fabs: FunctionValue<'ctx>,
    sin: FunctionValue<'ctx>,
    cos: FunctionValue<'ctx>,
    exp: FunctionValue<'ctx>,
    log: FunctionValue<'ctx>,
    pow: FunctionValue<'ctx>,
    tan: FunctionValue<'ctx>,
    tanh: FunctionValue<'ctx>,
    atan2: FunctionValue<'ctx>,
}

impl<'ctx> Libm<'ctx> {
    fn declare(ctx: &'ctx Context, module: &Module<'ctx>) -> Result<Self, BackendError> {
        let f64t = ctx.f64_type();
        let intrinsic = |name: &str| {
            Intrinsic::find(name)
                .and_then(|i| i.get_declaration(module, &[f64t.into()]))
                .ok_or_else(|| BackendError::Llvm(format!("intrinsic {name} not found")))
        };
        let unary = f64t.fn_type(&[f64t.into()], false);
        let binary = f64t.fn_type(&[f64t.into(), f64t.into()], false);
        let external = |name: &str, ty| module.add_function(name, ty, Some(Linkage::External));
        Ok(Libm {
            sqrt: intrinsic("llvm.sqrt")?,
            fabs: intrinsic("llvm.fabs")?,
            sin: intrinsic("llvm.sin")?,
            cos: intrinsic("llvm.cos")?,
            exp: intrinsic("llvm.exp")?,
            log: intrinsic("llvm.log")?,
            pow: {
                let f = external("pow", binary);
                let kind = Attribute::get_named_enum_kind_id("nobuiltin");
                f.add_attribute(AttributeLoc::Function, ctx.create_enum_attribute(kind, 0));
                f
            },
            tan: external("tan", unary),
            tanh: external("tanh", unary),
            atan2: external("atan2", binary),
        })
    }
}

struct Emitter<'a, 'ctx> {
    ctx: &'ctx Context,
    b: &'a Builder<'ctx>,
    lib: &'a Libm<'ctx>,
    f: FunctionValue<'ctx>,
}

type R<'ctx> = Result<FloatValue<'ctx>, String>;

impl<'ctx> Emitter<'_, 'ctx> {
    fn input(&self, slot: u32, index: u32) -> R<'ctx> {
        let p = self.f.get_nth_param(slot).expect("9 parameters");
        llvm14::load_f64(self.ctx, self.b, p.into_pointer_value(), index)
    }

    fn unary(&self, u: Unary, x: FloatValue<'ctx>) -> R<'ctx> {
        let l = self.lib;
        let f = match u {
            Unary::Neg => return self.b.build_float_neg(x, "").map_err(|e| e.to_string()),
            Unary::Sqrt => l.sqrt,
            Unary::Abs => l.fabs,
            Unary::Sin => l.sin,
            Unary::Cos => l.cos,
            Unary::Tan => l.tan,
            Unary::Exp => l.exp,
            Unary::Log => l.log,
            Unary::Tanh => l.tanh,
        };
        llvm14::call_f64(self.b, f, &[x])
    }

    /// Square and multiply over |n|, then one reciprocal for n < 0 — the order of
    /// operations of `__powidf2`, which `f64::powi` calls for a non-constant exponent.
    fn powi(&self, x: FloatValue<'ctx>, n: i32) -> R<'ctx> {
        let one = self.ctx.f64_type().const_float(1.0);
        let mul = |a, b| self.b.build_float_mul(a, b, "").map_err(|e| e.to_string());
        let mut e = n.unsigned_abs();
        let mut base = x;
        let mut acc: Option<FloatValue> = None;
        while e != 0 {
            if e & 1 == 1 {
                acc = Some(match acc {
                    None => base,
                    Some(a) => mul(a, base)?,
                });
            }
            e >>= 1;
            if e != 0 {
                base = mul(base, base)?;
            }
        }
        let r = acc.unwrap_or(one);
        if n < 0 {
            self.b
                .build_float_div(one, r, "")
                .map_err(|e| e.to_string())
        } else {
            Ok(r)
        }
    }

    /// IEEE minNum/maxNum as `f64::min`/`f64::max` behave on x86-64: a NaN operand
    /// yields the other one; `b` wins only if strictly better, so for equal operands
    /// (also `0.0` vs `-0.0`) the first operand is returned.
    fn min_max(&self, a: FloatValue<'ctx>, b: FloatValue<'ctx>, better: FloatPredicate) -> R<'ctx> {
        let s = |e: inkwell::builder::BuilderError| e.to_string();
        let b_better = self.b.build_float_compare(better, b, a, "").map_err(s)?;
        let pick = self.b.build_select(b_better, b, a, "").map_err(s)?;
        let a_nan = self
            .b
            .build_float_compare(FloatPredicate::UNO, a, a, "")
            .map_err(s)?;
        let r = self
            .b
            .build_select(a_nan, b, pick.into_float_value(), "")
            .map_err(s)?;
        Ok(r.into_float_value())
    }

    /// `table`'s derivative `d` at `x`: the search of `SplineTable::piece_index` as
    /// integer selects, then `horner` on the piece's coefficients, operation for
    /// operation as the interpreter does it.
    fn spline(
        &self,
        table: &SplineTable,
        d: u8,
        kp: PointerValue<'ctx>,
        cp: PointerValue<'ctx>,
        x: FloatValue<'ctx>,
    ) -> R<'ctx> {
        let s = |e: inkwell::builder::BuilderError| e.to_string();
        let i64t = self.ctx.i64_type();
        let at_least = |base: IntValue<'ctx>| -> Result<IntValue<'ctx>, String> {
            let k = llvm14::load_f64_dyn(self.b, kp, base)?;
            // Ordered `>=`: false for NaN, like Rust's `>=`.
            self.b
                .build_float_compare(FloatPredicate::OGE, x, k, "")
                .map_err(s)
        };
        let mut base = i64t.const_zero();
        for half in search_steps(table.knots().len()) {
            let probe = self
                .b
                .build_int_add(base, i64t.const_int(half as u64, false), "")
                .map_err(s)?;
            let c = at_least(probe)?;
            base = self
                .b
                .build_select(c, probe, base, "")
                .map_err(s)?
                .into_int_value();
        }
        let c = at_least(base)?;
        let one = self.b.build_int_z_extend(c, i64t, "").map_err(s)?;
        let piece = self.b.build_int_add(base, one, "").map_err(s)?;
        let stride = 5 - u64::from(d);
        let start = self
            .b
            .build_int_mul(piece, i64t.const_int(stride, false), "")
            .map_err(s)?;
        let load = |j: u64| -> R<'ctx> {
            let idx = self
                .b
                .build_int_add(start, i64t.const_int(j, false), "")
                .map_err(s)?;
            llvm14::load_f64_dyn(self.b, cp, idx)
        };
        let b0 = load(0)?;
        let dx = self.b.build_float_sub(x, b0, "").map_err(s)?;
        let mut r = load(stride - 1)?;
        for j in (1..stride - 1).rev() {
            let a = load(j)?;
            let p = self.b.build_float_mul(dx, r, "").map_err(s)?;
            r = self.b.build_float_add(a, p, "").map_err(s)?;
        }
        Ok(r)
    }

    fn select(
        &self,
        cmp: Cmp,
        a: FloatValue<'ctx>,
        b: FloatValue<'ctx>,
        t: FloatValue<'ctx>,
        f: FloatValue<'ctx>,
    ) -> R<'ctx> {
        // Ordered predicates except `!=`, which is true when either side is NaN, exactly
        // like Rust's comparison operators used by the interpreter.
        let pred = match cmp {
            Cmp::Lt => FloatPredicate::OLT,
            Cmp::Le => FloatPredicate::OLE,
            Cmp::Gt => FloatPredicate::OGT,
            Cmp::Ge => FloatPredicate::OGE,
            Cmp::Eq => FloatPredicate::OEQ,
            Cmp::Ne => FloatPredicate::UNE,
        };
        let s = |e: inkwell::builder::BuilderError| e.to_string();
        let c = self.b.build_float_compare(pred, a, b, "").map_err(s)?;
        let r = self.b.build_select(c, t, f, "").map_err(s)?;
        Ok(r.into_float_value())
    }
}
