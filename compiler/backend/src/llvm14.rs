//! Every call whose shape depends on the LLVM version lives here (typed pointers, the
//! pass-builder entry point, the version string). Supporting a newer LLVM means adding
//! a sibling module with the same functions behind a cargo feature of this crate.

use inkwell::builder::Builder;
use inkwell::context::Context;
use inkwell::module::{Linkage, Module};
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::TargetMachine;
use inkwell::types::PointerType;
use inkwell::values::{BasicMetadataValueEnum, FloatValue, FunctionValue, IntValue, PointerValue};
use inkwell::AddressSpace;

/// The full version of the linked LLVM, as `llvm-config --version` printed it at build
/// time (the LLVM 14 C API cannot report it).
pub fn version() -> &'static str {
    env!("FDC_LLVM_VERSION")
}

/// `double*` (LLVM 14 still has typed pointers).
pub fn f64_ptr_type(ctx: &Context) -> PointerType<'_> {
    ctx.f64_type().ptr_type(AddressSpace::default())
}

/// `ptr[index]` as a value.
pub fn load_f64<'ctx>(
    ctx: &'ctx Context,
    b: &Builder<'ctx>,
    ptr: PointerValue<'ctx>,
    index: u32,
) -> Result<FloatValue<'ctx>, String> {
    let at = element_ptr(ctx, b, ptr, index)?;
    let v = b.build_load(at, "").map_err(|e| e.to_string())?;
    Ok(v.into_float_value())
}

/// `ptr[index] = value`.
pub fn store_f64<'ctx>(
    ctx: &'ctx Context,
    b: &Builder<'ctx>,
    ptr: PointerValue<'ctx>,
    index: u32,
    value: FloatValue<'ctx>,
) -> Result<(), String> {
    let at = element_ptr(ctx, b, ptr, index)?;
    b.build_store(at, value).map_err(|e| e.to_string())?;
    Ok(())
}

fn element_ptr<'ctx>(
    ctx: &'ctx Context,
    b: &Builder<'ctx>,
    ptr: PointerValue<'ctx>,
    index: u32,
) -> Result<PointerValue<'ctx>, String> {
    if index == 0 {
        return Ok(ptr);
    }
    let i = ctx.i64_type().const_int(u64::from(index), false);
    // SAFETY: the index is checked against the declared input size (or is an output
    // index below the output count) before code generation; the caller guarantees the
    // arrays have those sizes (see `ElementFn`).
    unsafe { b.build_in_bounds_gep(ptr, &[i], "") }.map_err(|e| e.to_string())
}

/// A private constant global holding `vals`, as a `double*` to its first number.
///
/// The initializer is the numbers' raw bytes (one `ConstantDataArray` of `i8`), not
/// an array of `ConstantFP`: LLVM keeps every `ConstantFP` ever made uniqued in the
/// context for its life (about 3 KB of compiler memory per table point when each
/// number was one), while raw data costs its 8 bytes once. Native byte order: the
/// module is compiled for, and run on, this host (the JIT; the object cache is keyed
/// by the host target).
pub fn f64_data_global<'ctx>(
    ctx: &'ctx Context,
    module: &Module<'ctx>,
    name: &str,
    vals: &[f64],
) -> PointerValue<'ctx> {
    let bytes: Vec<u8> = vals.iter().flat_map(|v| v.to_ne_bytes()).collect();
    let init = ctx.const_string(&bytes, false);
    let g = module.add_global(init.get_type(), None, name);
    g.set_initializer(&init);
    g.set_constant(true);
    g.set_linkage(Linkage::Private);
    g.set_alignment(8);
    // Typed pointers: `[8N x i8]*` → `double*` (a no-op once pointers are opaque).
    g.as_pointer_value().const_cast(f64_ptr_type(ctx))
}

/// `data[index]` for a `double*` from [`f64_data_global`] and a run-time index.
///
/// # Safety contract
/// The caller guarantees `index` is below the number of values (the spline search
/// only produces such indices).
pub fn load_f64_dyn<'ctx>(
    b: &Builder<'ctx>,
    data: PointerValue<'ctx>,
    index: IntValue<'ctx>,
) -> Result<FloatValue<'ctx>, String> {
    // SAFETY: `index` is below the data length by construction (see the caller).
    let at = unsafe { b.build_in_bounds_gep(data, &[index], "") }.map_err(|e| e.to_string())?;
    let v = b.build_load(at, "").map_err(|e| e.to_string())?;
    Ok(v.into_float_value())
}

/// A call of a function returning `double`.
pub fn call_f64<'ctx>(
    b: &Builder<'ctx>,
    f: FunctionValue<'ctx>,
    args: &[FloatValue<'ctx>],
) -> Result<FloatValue<'ctx>, String> {
    let args: Vec<BasicMetadataValueEnum> = args.iter().map(|&a| a.into()).collect();
    let call = b.build_call(f, &args, "").map_err(|e| e.to_string())?;
    call.try_as_basic_value()
        .basic()
        .map(|v| v.into_float_value())
        .ok_or_else(|| "call returned no value".to_string())
}

/// Runs the default new-pass-manager pipeline `default<O{level}>` with the C API's
/// default tuning options (loop vectorizer on, SLP vectorizer off: on element
/// functions it cost compile time and gained nothing measurable).
pub fn optimize(module: &Module, tm: &TargetMachine, level: u8) -> Result<(), String> {
    let passes = format!("default<O{level}>");
    module
        .run_passes(&passes, tm, PassBuilderOptions::create())
        .map_err(|e| e.to_string())
}

/// Process-wide code generator options, set once before the first compilation.
///
/// `-enable-misched=false`: LLVM 14's pre-RA machine scheduler is superlinear on the
/// huge single-block functions this crate produces (60 % of code generation, 8.6 s of
/// 9 s for a 36 000-node function); the SelectionDAG scheduler still orders the code
/// and the out-of-order cores we target reorder anyway (docs/performance.md).
/// The C API offers no per-target-machine switch, so this goes through LLVM's command
/// line parser; nothing else in an fdc process uses LLVM.
pub fn set_global_codegen_options() {
    use inkwell::llvm_sys::support::LLVMParseCommandLineOptions;
    use std::ffi::CString;
    let args: Vec<CString> = ["fdc-backend", "-enable-misched=false"]
        .iter()
        .map(|a| CString::new(*a).expect("no NUL in literals"))
        .collect();
    let argv: Vec<*const std::ffi::c_char> = args.iter().map(|a| a.as_ptr()).collect();
    // SAFETY: argv holds `argc` valid C strings that outlive the call; the overview
    // may be null. Called once (under the native-target initialization lock).
    unsafe { LLVMParseCommandLineOptions(argv.len() as i32, argv.as_ptr(), std::ptr::null()) };
}
