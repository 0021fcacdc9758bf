//===- GpuEmulatorCompiler.cpp - gpu.func to emulator programs ------------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// Compiles a kernel once, when it is first looked up: every value gets a
// slot of words per lane, every op an instruction with its handler
// (GpuEmulatorHandlers.h) and operands, nested regions programs of their own;
// ops, types and layouts the emulator does not know abort with the op named.
//
//===----------------------------------------------------------------------===//

#include "GpuEmulatorHandlers.h"

#include "linattn/Conversion/LinAttnToGPU/LinAttnToGPU.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

namespace linattn::gpu_emulator {
/// The emulator's internals: hidden in liblinattn_gpu_emulator.so.
namespace LLVM_LIBRARY_VISIBILITY detail {

namespace {
//===----------------------------------------------------------------------===//
// The compiler: gpu.func -> programs
//===----------------------------------------------------------------------===//

/// Words of a value of type `type` per lane, 0 when the emulator has no
/// representation for it.
static uint32_t wordsOf(Type type) {
  // Pointers (of bulk copies and mbarriers): their address.
  if (isa<LLVM::LLVMPointerType>(type))
    return 1;
  if (type.isIntOrIndexOrFloat())
    return type.isIndex() || type.getIntOrFloatBitWidth() <= 64 ? 1 : 0;
  if (auto vector = dyn_cast<VectorType>(type)) {
    if (vector.isScalable() || !vector.getElementType().isIntOrIndexOrFloat())
      return 0;
    return vector.getNumElements();
  }
  if (auto structType = dyn_cast<LLVM::LLVMStructType>(type)) {
    uint32_t words = 0;
    for (Type element : structType.getBody()) {
      uint32_t w = wordsOf(element);
      if (!w)
        return 0;
      words += w;
    }
    return words;
  }
  return 0;
}

static unsigned intWidth(Type type) {
  if (type.isIndex())
    return 64;
  return type.getIntOrFloatBitWidth();
}

/// Shared memory per block every GPU of sm_80 and later allows (99 KiB on
/// sm_86, sm_89 and sm_120; more elsewhere), and sm_90 (227 KiB), the one
/// chip of kernels with wgmma. Kernels above 48 KiB take it as dynamic
/// shared memory when compiled (linattn-gpu-dynamic-shared-memory).
constexpr int64_t kMaxSharedBytes = 99 * 1024;
constexpr int64_t kMaxSharedBytesSm90 = 227 * 1024;

/// The N of `op` when it is a wgmma with A in registers, the inline PTX of
/// `mlir::linattn::wgmmaRegisterAAsm` (f16 or bf16) whose result holds its
/// N / 2 f32 accumulators.
static std::optional<int64_t> registerAWgmmaN(Operation *op) {
  auto wgmma = dyn_cast<LLVM::InlineAsmOp>(op);
  if (!wgmma || wgmma.getNumResults() != 1)
    return std::nullopt;
  auto result = dyn_cast<LLVM::LLVMStructType>(wgmma.getResult(0).getType());
  if (!result)
    return std::nullopt;
  int64_t n = 2 * static_cast<int64_t>(result.getBody().size());
  if (n < 8 || n > 256 || n % 8)
    return std::nullopt;
  StringRef text = wgmma.getAsmString();
  if (text != mlir::linattn::wgmmaRegisterAAsm(n, true) &&
      text != mlir::linattn::wgmmaRegisterAAsm(n, false))
    return std::nullopt;
  return n;
}

class Compiler {
public:
  explicit Compiler(Kernel &kernel) : k(kernel) {}

  void compile() {
    gpu::GPUFuncOp func = k.func;
    Region &body = func.getBody();
    if (!body.hasOneBlock())
      failCompile(k.name, func, "the kernel body has more than one block");
    // Arguments.
    unsigned numArgs = func.getFunctionType().getNumInputs();
    for (BlockArgument arg : func.getArguments().take_front(numArgs)) {
      ArgInfo info;
      if (auto memref = dyn_cast<MemRefType>(arg.getType())) {
        info.buffer =
            addBuffer(arg, memref, /*shared=*/false, arg.getArgNumber(), func);
        k.params += 3 + 2 * memref.getRank();
      } else if (arg.getType().isIntOrIndexOrFloat()) {
        Slot s = define(arg, func);
        info.slot = s.offset;
        info.bytes =
            arg.getType().isIndex()
                ? 8
                : std::max(1u, arg.getType().getIntOrFloatBitWidth() / 8);
        info.isFloat = isa<FloatType>(arg.getType());
        k.params += 1;
      } else {
        failCompile(k.name, func,
                    "kernel argument #" + std::to_string(arg.getArgNumber()) +
                        " has a type the emulator does not support");
      }
      k.args.push_back(info);
    }
    for (auto [i, attribution] :
         llvm::enumerate(func.getWorkgroupAttributions())) {
      auto memref = cast<MemRefType>(attribution.getType());
      if (!memref.hasStaticShape() || !memref.getLayout().isIdentity())
        failCompile(k.name, func,
                    "workgroup buffer #" + std::to_string(i) +
                        " has no static shape or identity layout");
      uint32_t buffer =
          addBuffer(attribution, memref, /*shared=*/true, i, func);
      BufferInfo &info = k.buffers[buffer];
      info.alignment = info.elementBytes;
      if (auto align =
              dyn_cast_or_null<IntegerAttr>(func.getWorkgroupAttributionAttr(
                  i, LLVM::LLVMDialect::getAlignAttrName())))
        info.alignment = std::max<int64_t>(info.alignment, align.getInt());
    }
    int64_t sharedBytes = 0;
    for (BufferInfo &info : k.buffers)
      if (info.shared) {
        info.sharedAddress = llvm::alignTo(sharedBytes, info.alignment);
        sharedBytes = info.sharedAddress + info.elements * info.elementBytes;
      }
    k.wgmma = func.walk([](Operation *op) {
                    return isa<NVVM::WgmmaMmaAsyncOp>(op) || registerAWgmmaN(op)
                               ? WalkResult::interrupt()
                               : WalkResult::advance();
                  })
                  .wasInterrupted();
    if (k.wgmma ? sharedBytes > kMaxSharedBytesSm90
                : sharedBytes > kMaxSharedBytes)
      failCompile(k.name, func,
                  "the kernel has " + std::to_string(sharedBytes) +
                      " bytes of workgroup memory; " +
                      (k.wgmma ? "sm_90 allows a block 227 KiB"
                               : "every GPU of sm_80 and later allows a "
                                 "block 99 KiB"));
    if (!func.getPrivateAttributions().empty())
      failCompile(k.name, func, "private attributions are not emulated");
    k.programs.emplace_back();
    compileBlock(body.front(), 0, 1);
    k.words = next;
  }

private:
  uint32_t addBuffer(Value value, MemRefType type, bool shared, unsigned index,
                     Operation *op) {
    Type element = type.getElementType();
    if (!element.isIntOrIndexOrFloat())
      failCompile(k.name, op, "a buffer of elements the emulator cannot load");
    unsigned bits = element.isIndex() ? 64 : element.getIntOrFloatBitWidth();
    if (bits != 8 && bits != 16 && bits != 32 && bits != 64)
      failCompile(k.name, op,
                  "a buffer of " + std::to_string(bits) + "-bit elements");
    BufferInfo info;
    info.shared = shared;
    info.index = index;
    info.rank = type.getRank();
    info.elementBytes = bits / 8;
    if (shared) {
      info.shape.assign(type.getShape().begin(), type.getShape().end());
      info.elements = type.getNumElements();
    }
    k.buffers.push_back(info);
    buffers[value] = k.buffers.size() - 1;
    return k.buffers.size() - 1;
  }

  Slot define(Value value, Operation *op) {
    uint32_t words = wordsOf(value.getType());
    if (!words) {
      std::string type;
      llvm::raw_string_ostream os(type);
      os << value.getType();
      failCompile(k.name, op, "values of type " + type + " are not emulated");
    }
    Slot s{next, words};
    next += words;
    slots[value] = s;
    return s;
  }

  Slot use(Value value, Operation *op) {
    auto it = slots.find(value);
    if (it == slots.end())
      failCompile(k.name, op, "an operand the emulator has no value for");
    return it->second;
  }

  uint32_t bufferOf(Value value, Operation *op) {
    auto it = buffers.find(value);
    if (it == buffers.end())
      failCompile(k.name, op,
                  "a memref that is not a kernel argument or workgroup "
                  "buffer");
    return it->second;
  }

  /// Compiles `block` into program `index`, at nesting `depth`.
  void compileBlock(Block &block, uint32_t index, unsigned depth) {
    k.maxDepth = std::max(k.maxDepth, depth);
    for (Operation &op : block.without_terminator())
      compileOp(op, index, depth);
    Operation *terminator = block.getTerminator();
    if (isa<gpu::ReturnOp>(terminator)) {
      if (terminator->getNumOperands())
        failCompile(k.name, terminator, "gpu.return with values");
      return;
    }
    auto yield = dyn_cast<scf::YieldOp>(terminator);
    if (!yield)
      failCompile(k.name, terminator,
                  "unsupported terminator '" +
                      terminator->getName().getStringRef().str() + "'");
    SmallVector<Slot, 4> yields;
    for (Value v : yield.getOperands())
      yields.push_back(use(v, yield));
    k.programs[index].yields = yields;
  }

  uint32_t newProgram() {
    k.programs.emplace_back();
    return k.programs.size() - 1;
  }

  void emit(uint32_t program, Inst in) {
    k.programs[program].insts.push_back(std::move(in));
  }

  /// An elementwise op on vectors (one word per element): `fn` once per
  /// word, on the words of its one or two operands at the same position.
  void emitPerWord(Operation &op, Handler fn, uint32_t program, int64_t imm = 0,
                   int64_t imm2 = 0) {
    uint32_t words = wordsOf(op.getResult(0).getType());
    if (!words)
      failCompile(k.name, &op, "a vector the emulator does not support");
    uint32_t a = use(op.getOperand(0), &op).offset;
    std::optional<uint32_t> b;
    if (op.getNumOperands() > 1)
      b = use(op.getOperand(1), &op).offset;
    uint32_t r = define(op.getResult(0), &op).offset;
    for (uint32_t w = 0; w < words; ++w) {
      Inst in;
      in.fn = fn;
      in.op = &op;
      in.a = a + w;
      if (b)
        in.b = *b + w;
      in.r = r + w;
      in.imm = imm;
      in.imm2 = imm2;
      emit(program, std::move(in));
    }
  }

  /// Whether `value` is a contractible mulf whose only use is a contractible
  /// addf that will fuse it.
  static bool isFusedMul(Value value) {
    auto mul = value.getDefiningOp<arith::MulFOp>();
    if (!mul || !value.hasOneUse() ||
        !arith::bitEnumContainsAll(mul.getFastmath(),
                                   arith::FastMathFlags::contract))
      return false;
    auto add = dyn_cast<arith::AddFOp>(*value.user_begin());
    return add && fusedOperand(add) == value;
  }

  /// The operand of `add` that is a mulf it fuses with, if any.
  static Value fusedOperand(arith::AddFOp add) {
    if (isa<VectorType>(add.getType()) ||
        !arith::bitEnumContainsAll(add.getFastmath(),
                                   arith::FastMathFlags::contract))
      return Value();
    for (Value operand : {add.getLhs(), add.getRhs()}) {
      auto mul = operand.getDefiningOp<arith::MulFOp>();
      if (mul && operand.hasOneUse() &&
          arith::bitEnumContainsAll(mul.getFastmath(),
                                    arith::FastMathFlags::contract))
        return operand;
    }
    return Value();
  }

  /// The first word of the element or subvector of `words` words at the
  /// static `positions` of a vector of `shape` (row major, one word per
  /// element), for vector.extract and vector.insert; poison positions fail.
  int64_t wordPosition(Operation *op, ArrayRef<int64_t> shape,
                       ArrayRef<int64_t> positions, uint32_t words) {
    int64_t at = 0;
    for (auto [i, position] : llvm::enumerate(positions)) {
      if (position < 0)
        failCompile(k.name, op,
                    op->getName().getStringRef().str() +
                        " at a poison position");
      at = at * shape[i] + position;
    }
    return at * words;
  }

  /// nvgpu.device_async_copy between rank-1 buffers: global to a 16-byte
  /// aligned workgroup buffer of the same element type. Its token is not a
  /// value: groups and waits are per thread, in program order.
  /// nvvm.mbarrier.init, .inval, .arrive.expect_tx and .try_wait.parity:
  /// a = the address, b = the count, bytes or parity. Predicated forms,
  /// results and scopes other than the CTA are not emulated.
  void compileMBarrier(Operation &op, uint32_t program) {
    Inst in;
    in.op = &op;
    Value second;
    if (auto init = dyn_cast<NVVM::MBarrierInitOp>(op)) {
      if (init.getPredicate())
        failCompile(k.name, &op, "a predicated mbarrier.init is not emulated");
      in.fn = mbarrierInitOp;
      second = init.getCount();
    } else if (isa<NVVM::MBarrierInvalOp>(op)) {
      in.fn = mbarrierInvalOp;
    } else if (auto arrive = dyn_cast<NVVM::MBarrierArriveExpectTxOp>(op)) {
      if (arrive.getPredicate() || arrive.getRes() ||
          arrive.getScope() != NVVM::MemScopeKind::CTA || arrive.getRelaxed())
        failCompile(k.name, &op,
                    "mbarrier.arrive.expect_tx other than without a result "
                    "or predicate, at CTA scope, is not emulated");
      in.fn = mbarrierArriveExpectTxOp;
      second = arrive.getTxcount();
    } else {
      in.fn = mbarrierTryWaitParityOp;
      second = cast<NVVM::MBarrierTryWaitParityOp>(op).getPhase();
    }
    in.a = use(op.getOperand(0), &op).offset;
    if (second)
      in.b = use(second, &op).offset;
    emit(program, std::move(in));
  }

  void compileAsyncCopy(nvgpu::DeviceAsyncCopyOp copy, uint32_t program) {
    Operation *op = copy.getOperation();
    uint32_t dst = bufferOf(copy.getDst(), op);
    uint32_t src = bufferOf(copy.getSrc(), op);
    const BufferInfo &to = k.buffers[dst];
    const BufferInfo &from = k.buffers[src];
    int64_t elements = copy.getDstElements().getZExtValue();
    int64_t bytes = elements * to.elementBytes;
    if (!to.shared || from.shared || to.rank != 1 || from.rank != 1 ||
        to.elementBytes != from.elementBytes ||
        (bytes != 4 && bytes != 8 && bytes != 16))
      failCompile(k.name, op,
                  "only nvgpu.device_async_copy of 4, 8 or 16 bytes from a "
                  "rank-1 global buffer to a rank-1 workgroup buffer of the "
                  "same element type is emulated");
    if (to.alignment < bytes)
      failCompile(k.name, op,
                  "nvgpu.device_async_copy to workgroup buffer #" +
                      std::to_string(to.index) + ", which is not " +
                      std::to_string(bytes) + "-byte aligned (llvm.align)");
    k.buffers[dst].stored = true;
    k.asyncCopies = true;
    Inst in;
    in.fn = asyncCopyOp;
    in.op = op;
    in.imm = dst;
    in.imm2 = src;
    in.c = static_cast<uint32_t>(elements);
    in.ins = {use(copy.getDstIndices()[0], op),
              use(copy.getSrcIndices()[0], op)};
    if (Value count = copy.getSrcElements())
      in.ins.push_back(use(count, op));
    emit(program, std::move(in));
  }

  template <template <typename> class H>
  Handler floatHandler(FloatKind kind) {
    switch (kind) {
    case FloatKind::F16:
      return H<F16>::fn;
    case FloatKind::BF16:
      return H<BF16>::fn;
    case FloatKind::F32:
      return H<F32>::fn;
    case FloatKind::F64:
      return H<F64>::fn;
    }
    return nullptr;
  }

  template <typename Op>
  struct Binary {
    template <typename T>
    struct H {
      static constexpr Handler fn = floatBinary<T, Op>;
    };
  };
  template <typename Op>
  struct Unary {
    template <typename T>
    struct H {
      static constexpr Handler fn = floatUnary<T, Op>;
    };
  };
  template <typename T>
  struct FmaH {
    static inline const Handler fn = floatFmaHandler<T>();
  };
  template <typename T>
  struct CmpH {
    static constexpr Handler fn = floatCmp<T>;
  };

  template <IntBinaryKind K>
  Handler intHandler(unsigned width, Operation *op) {
    switch (width) {
    case 1:
      return intBinary<1, K>;
    case 8:
      return intBinary<8, K>;
    case 16:
      return intBinary<16, K>;
    case 32:
      return intBinary<32, K>;
    case 64:
      return intBinary<64, K>;
    }
    failCompile(k.name, op,
                "integers of width " + std::to_string(width) +
                    " are not emulated");
  }

  Handler intCmpHandler(unsigned width, Operation *op) {
    switch (width) {
    case 1:
      return intCmp<1>;
    case 8:
      return intCmp<8>;
    case 16:
      return intCmp<16>;
    case 32:
      return intCmp<32>;
    case 64:
      return intCmp<64>;
    }
    failCompile(k.name, op,
                "integers of width " + std::to_string(width) +
                    " are not emulated");
  }

  FloatKind floatKind(Type type, Operation *op) {
    std::optional<FloatKind> kind = floatKindOf(type);
    if (!kind)
      failCompile(k.name, op, "a float type the emulator does not support");
    return *kind;
  }

  /// The conversions `printfOp` formats as the GPU's vprintf reads them:
  /// integers (d i o u x X c) of i32 arguments without a length, of i64 and
  /// index ones with l or ll (vprintf reads the bytes the length names, and
  /// the lowering packs integers as they are); floats (f F e E g G a A) of
  /// f32 (the lowering widens them to f64) and f64 ones; `%%`.
  void checkPrintf(gpu::PrintfOp print) {
    StringRef format = print.getFormat();
    size_t args = 0;
    for (size_t i = 0; i < format.size(); ++i) {
      if (format[i] != '%')
        continue;
      if (i + 1 < format.size() && format[i + 1] == '%') {
        ++i;
        continue;
      }
      size_t end = printfConversionEnd(format, i);
      if (end == StringRef::npos)
        failCompile(k.name, print,
                    "printf conversions other than integers "
                    "and floats are not emulated");
      if (args >= print.getArgs().size())
        failCompile(k.name, print,
                    "printf has fewer arguments than "
                    "conversions");
      Type type = print.getArgs()[args++].getType();
      bool isFloat = StringRef("fFeEgGaA").contains(format[end]);
      bool wide = format.slice(i, end).contains('l');
      bool matches = isFloat
                         ? type.isF32() || type.isF64()
                         : (wide ? type.isIndex() || type.isSignlessInteger(64)
                                 : type.isSignlessInteger(32));
      if (!matches)
        failCompile(k.name, print,
                    "a printf argument's type does not match "
                    "its conversion (i32 without a length, "
                    "i64 and index with l or ll, f32 or f64)");
      i = end;
    }
    if (args != print.getArgs().size())
      failCompile(k.name, print, "printf has more arguments than conversions");
  }

  /// An op on scalars: `in` with a, b, c, r filled.
  Inst scalarInst(Operation &op, Handler fn) {
    Inst in;
    in.fn = fn;
    in.op = &op;
    for (Value operand : op.getOperands())
      if (wordsOf(operand.getType()) != 1)
        failCompile(k.name, &op, "vector operands are not emulated here");
    if (op.getNumOperands() > 0)
      in.a = use(op.getOperand(0), &op).offset;
    if (op.getNumOperands() > 1)
      in.b = use(op.getOperand(1), &op).offset;
    if (op.getNumOperands() > 2)
      in.c = use(op.getOperand(2), &op).offset;
    if (op.getNumResults() > 0)
      in.r = define(op.getResult(0), &op).offset;
    return in;
  }

  Handler floatBinaryHandler(Operation &op, FloatKind kind) {
    return llvm::TypeSwitch<Operation *, Handler>(&op)
        .Case(
            [&](arith::AddFOp) { return floatHandler<Binary<AddOp>::H>(kind); })
        .Case(
            [&](arith::SubFOp) { return floatHandler<Binary<SubOp>::H>(kind); })
        .Case(
            [&](arith::MulFOp) { return floatHandler<Binary<MulOp>::H>(kind); })
        .Case(
            [&](arith::DivFOp) { return floatHandler<Binary<DivOp>::H>(kind); })
        .Case(
            [&](arith::RemFOp) { return floatHandler<Binary<RemOp>::H>(kind); })
        .Case([&](arith::MaximumFOp) {
          return floatHandler<Binary<MaximumOp>::H>(kind);
        })
        .Case([&](arith::MinimumFOp) {
          return floatHandler<Binary<MinimumOp>::H>(kind);
        })
        .Case([&](arith::MaxNumFOp) {
          return floatHandler<Binary<MaxNumOp>::H>(kind);
        })
        .Case([&](arith::MinNumFOp) {
          return floatHandler<Binary<MinNumOp>::H>(kind);
        })
        .Default([](Operation *) { return Handler(nullptr); });
  }

  Handler floatUnaryHandler(Operation &op, FloatKind kind) {
    return llvm::TypeSwitch<Operation *, Handler>(&op)
        .Case(
            [&](arith::NegFOp) { return floatHandler<Unary<NegOp>::H>(kind); })
        .Case([&](math::ExpOp) { return floatHandler<Unary<ExpOp>::H>(kind); })
        .Case(
            [&](math::Exp2Op) { return floatHandler<Unary<Exp2Op>::H>(kind); })
        .Case([&](math::LogOp) { return floatHandler<Unary<LogOp>::H>(kind); })
        .Case(
            [&](math::SqrtOp) { return floatHandler<Unary<SqrtOp>::H>(kind); })
        .Case([&](math::RsqrtOp) {
          return floatHandler<Unary<RsqrtOp>::H>(kind);
        })
        .Case([&](math::AbsFOp) { return floatHandler<Unary<AbsOp>::H>(kind); })
        .Case(
            [&](math::TanhOp) { return floatHandler<Unary<TanhOp>::H>(kind); })
        .Default([](Operation *) { return Handler(nullptr); });
  }

  Handler intBinaryHandler(Operation &op, unsigned w) {
    return llvm::TypeSwitch<Operation *, Handler>(&op)
        .Case([&](arith::AddIOp) {
          return intHandler<IntBinaryKind::Add>(w, &op);
        })
        .Case([&](arith::SubIOp) {
          return intHandler<IntBinaryKind::Sub>(w, &op);
        })
        .Case([&](arith::MulIOp) {
          return intHandler<IntBinaryKind::Mul>(w, &op);
        })
        .Case([&](arith::DivUIOp) {
          return intHandler<IntBinaryKind::DivU>(w, &op);
        })
        .Case([&](arith::DivSIOp) {
          return intHandler<IntBinaryKind::DivS>(w, &op);
        })
        .Case([&](arith::RemUIOp) {
          return intHandler<IntBinaryKind::RemU>(w, &op);
        })
        .Case([&](arith::RemSIOp) {
          return intHandler<IntBinaryKind::RemS>(w, &op);
        })
        .Case([&](arith::CeilDivUIOp) {
          return intHandler<IntBinaryKind::CeilDivU>(w, &op);
        })
        .Case([&](arith::CeilDivSIOp) {
          return intHandler<IntBinaryKind::CeilDivS>(w, &op);
        })
        .Case([&](arith::FloorDivSIOp) {
          return intHandler<IntBinaryKind::FloorDivS>(w, &op);
        })
        .Case([&](arith::MinUIOp) {
          return intHandler<IntBinaryKind::MinU>(w, &op);
        })
        .Case([&](arith::MaxUIOp) {
          return intHandler<IntBinaryKind::MaxU>(w, &op);
        })
        .Case([&](arith::MinSIOp) {
          return intHandler<IntBinaryKind::MinS>(w, &op);
        })
        .Case([&](arith::MaxSIOp) {
          return intHandler<IntBinaryKind::MaxS>(w, &op);
        })
        .Case([&](arith::AndIOp) {
          return intHandler<IntBinaryKind::And>(w, &op);
        })
        .Case(
            [&](arith::OrIOp) { return intHandler<IntBinaryKind::Or>(w, &op); })
        .Case([&](arith::XOrIOp) {
          return intHandler<IntBinaryKind::Xor>(w, &op);
        })
        .Case([&](arith::ShLIOp) {
          return intHandler<IntBinaryKind::Shl>(w, &op);
        })
        .Case([&](arith::ShRUIOp) {
          return intHandler<IntBinaryKind::ShrU>(w, &op);
        })
        .Case([&](arith::ShRSIOp) {
          return intHandler<IntBinaryKind::ShrS>(w, &op);
        })
        .Default([](Operation *) { return Handler(nullptr); });
  }

  void compileConstant(arith::ConstantOp op) {
    Slot s = define(op.getResult(), op);
    Attribute value = op.getValue();
    auto bitsOf = [&](Attribute attr, Type type) -> std::optional<Word> {
      if (auto f = dyn_cast<FloatAttr>(attr))
        return f.getValue().bitcastToAPInt().getZExtValue();
      if (auto i = dyn_cast<IntegerAttr>(attr))
        return i.getValue().getZExtValue() &
               (intWidth(type) >= 64 ? ~Word(0)
                                     : (Word(1) << intWidth(type)) - 1);
      return std::nullopt;
    };
    if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
      Type element = dense.getElementType();
      int64_t i = 0;
      if (dense.isSplat()) {
        Attribute splat = dense.getSplatValue<Attribute>();
        std::optional<Word> bits = bitsOf(splat, element);
        if (!bits)
          failCompile(k.name, op, "an unsupported constant");
        for (uint32_t w = 0; w < s.words; ++w)
          k.constants.push_back({s.offset + w, *bits});
        return;
      }
      for (Attribute attr : dense.getValues<Attribute>()) {
        std::optional<Word> bits = bitsOf(attr, element);
        if (!bits)
          failCompile(k.name, op, "an unsupported constant");
        k.constants.push_back({s.offset + i++, *bits});
      }
      return;
    }
    std::optional<Word> bits = bitsOf(value, op.getType());
    if (!bits)
      failCompile(k.name, op, "an unsupported constant");
    k.constants.push_back({s.offset, *bits});
  }

  void compileOp(Operation &op, uint32_t program, unsigned depth) {
    // Constants are written once, into every lane.
    if (auto constant = dyn_cast<arith::ConstantOp>(op))
      return compileConstant(constant);
    // A mulf fused into the addf that uses it is computed there.
    if (isa<arith::MulFOp>(op) && isFusedMul(op.getResult(0)))
      return;

    Type resultType = op.getNumResults() ? op.getResult(0).getType() : Type();
    bool scalarResult =
        resultType && wordsOf(resultType) == 1 && !isa<VectorType>(resultType);

    if (auto add = dyn_cast<arith::AddFOp>(op)) {
      if (Value fused = fusedOperand(add)) {
        auto mul = fused.getDefiningOp<arith::MulFOp>();
        Value other = fused == add.getLhs() ? add.getRhs() : add.getLhs();
        Inst in;
        in.op = &op;
        in.fn = floatHandler<FmaH>(floatKind(resultType, &op));
        in.a = use(mul.getLhs(), &op).offset;
        in.b = use(mul.getRhs(), &op).offset;
        in.c = use(other, &op).offset;
        in.r = define(add.getResult(), &op).offset;
        return emit(program, std::move(in));
      }
    }

    if (scalarResult && isa<FloatType>(resultType) &&
        op.getNumOperands() == 2 && op.getDialect() &&
        op.getDialect()->getNamespace() == "arith") {
      if (Handler fn = floatBinaryHandler(op, floatKind(resultType, &op)))
        return emit(program, scalarInst(op, fn));
    }
    // On vectors of floats, element by element (a word each), each element
    // rounded as the scalar op rounds it: what NVPTX's packed bf16x2 and
    // f16x2 instructions compute two at a time.
    if (auto vector = dyn_cast_or_null<VectorType>(resultType);
        vector && wordsOf(vector) && isa<FloatType>(vector.getElementType()) &&
        op.getNumOperands() == 2 && op.getDialect() &&
        op.getDialect()->getNamespace() == "arith") {
      if (Handler fn =
              floatBinaryHandler(op, floatKind(vector.getElementType(), &op)))
        return emitPerWord(op, fn, program);
    }
    if (scalarResult && isa<FloatType>(resultType) &&
        op.getNumOperands() == 1) {
      if (Handler fn = floatUnaryHandler(op, floatKind(resultType, &op)))
        return emit(program, scalarInst(op, fn));
    }
    if (scalarResult && resultType.isIntOrIndex() && op.getNumOperands() == 2) {
      if (Handler fn = intBinaryHandler(op, intWidth(resultType)))
        return emit(program, scalarInst(op, fn));
    }

    if (auto fma = dyn_cast<math::FmaOp>(op)) {
      if (!scalarResult)
        failCompile(k.name, &op, "vector math.fma is not emulated");
      return emit(program, scalarInst(op, floatHandler<FmaH>(
                                              floatKind(resultType, &op))));
    }
    if (auto cmp = dyn_cast<arith::CmpFOp>(op)) {
      Inst in = scalarInst(
          op, floatHandler<CmpH>(floatKind(cmp.getLhs().getType(), &op)));
      in.imm = static_cast<int64_t>(cmp.getPredicate());
      return emit(program, std::move(in));
    }
    if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
      Inst in =
          scalarInst(op, intCmpHandler(intWidth(cmp.getLhs().getType()), &op));
      in.imm = static_cast<int64_t>(cmp.getPredicate());
      return emit(program, std::move(in));
    }
    if (auto select = dyn_cast<arith::SelectOp>(op)) {
      if (wordsOf(select.getCondition().getType()) != 1 ||
          isa<VectorType>(select.getCondition().getType()))
        failCompile(k.name, &op, "a vector condition is not emulated");
      Inst in;
      in.fn = selectOp;
      in.op = &op;
      in.a = use(select.getCondition(), &op).offset;
      in.b = use(select.getTrueValue(), &op).offset;
      in.c = use(select.getFalseValue(), &op).offset;
      Slot r = define(select.getResult(), &op);
      in.r = r.offset;
      in.imm = r.words;
      return emit(program, std::move(in));
    }
    if (isa<arith::ExtFOp, arith::TruncFOp>(op)) {
      // A vector converts element by element (a word each).
      FloatKind from =
          floatKind(getElementTypeOrSelf(op.getOperand(0).getType()), &op);
      FloatKind to = floatKind(getElementTypeOrSelf(resultType), &op);
      Handler fn = floatConvertGeneric;
      // Through float arithmetic only where that rounds once.
      if (from == FloatKind::F32 && to == FloatKind::F16)
        fn = floatConvert<F32, F16>;
      else if (from == FloatKind::F32 && to == FloatKind::BF16)
        fn = floatConvert<F32, BF16>;
      else if (from == FloatKind::F16 && to == FloatKind::F32)
        fn = floatConvert<F16, F32>;
      else if (from == FloatKind::BF16 && to == FloatKind::F32)
        fn = floatConvert<BF16, F32>;
      else if (from == FloatKind::F32 && to == FloatKind::F64)
        fn = floatConvert<F32, F64>;
      else if (from == FloatKind::F64 && to == FloatKind::F32)
        fn = floatConvert<F64, F32>;
      if (scalarResult) {
        Inst in = scalarInst(op, fn);
        in.imm = static_cast<int64_t>(from);
        in.imm2 = static_cast<int64_t>(to);
        return emit(program, std::move(in));
      }
      return emitPerWord(op, fn, program, static_cast<int64_t>(from),
                         static_cast<int64_t>(to));
    }
    if (isa<arith::ExtUIOp, arith::ExtSIOp, arith::TruncIOp, arith::IndexCastOp,
            arith::IndexCastUIOp>(op)) {
      if (!scalarResult)
        failCompile(k.name, &op, "vector conversions are not emulated");
      bool isSigned = isa<arith::ExtSIOp, arith::IndexCastOp>(op);
      Inst in = scalarInst(op, isSigned ? intResize<true> : intResize<false>);
      in.imm = intWidth(op.getOperand(0).getType());
      in.imm2 = intWidth(resultType);
      return emit(program, std::move(in));
    }
    if (isa<arith::SIToFPOp, arith::UIToFPOp>(op)) {
      if (!scalarResult)
        failCompile(k.name, &op, "vector conversions are not emulated");
      Inst in = scalarInst(op, isa<arith::SIToFPOp>(op) ? intToFloat<true>
                                                        : intToFloat<false>);
      in.imm = intWidth(op.getOperand(0).getType());
      in.imm2 = static_cast<int64_t>(floatKind(resultType, &op));
      return emit(program, std::move(in));
    }
    if (isa<arith::FPToSIOp, arith::FPToUIOp>(op)) {
      if (!scalarResult)
        failCompile(k.name, &op, "vector conversions are not emulated");
      Inst in = scalarInst(op, isa<arith::FPToSIOp>(op) ? floatToInt<true>
                                                        : floatToInt<false>);
      in.imm = static_cast<int64_t>(floatKind(op.getOperand(0).getType(), &op));
      in.imm2 = intWidth(resultType);
      return emit(program, std::move(in));
    }
    if (auto bitcast = dyn_cast<arith::BitcastOp>(op)) {
      if (!scalarResult)
        failCompile(k.name, &op, "vector bitcasts are not emulated here");
      // Same width: the bits are the bits.
      Inst in;
      in.fn = extractOp;
      in.op = &op;
      in.a = use(bitcast.getIn(), &op).offset;
      in.r = define(bitcast.getOut(), &op).offset;
      in.imm = 0;
      in.imm2 = 1;
      return emit(program, std::move(in));
    }

    // GPU ids.
    if (auto id = dyn_cast<gpu::ThreadIdOp>(op)) {
      Inst in = scalarInst(op, threadIdOp);
      in.imm = static_cast<int64_t>(id.getDimension());
      return emit(program, std::move(in));
    }
    if (auto id = dyn_cast<gpu::BlockIdOp>(op)) {
      Inst in = scalarInst(op, uniformIdOp);
      in.imm = 0;
      in.imm2 = static_cast<int64_t>(id.getDimension());
      return emit(program, std::move(in));
    }
    if (auto dim = dyn_cast<gpu::BlockDimOp>(op)) {
      Inst in = scalarInst(op, uniformIdOp);
      in.imm = 1;
      in.imm2 = static_cast<int64_t>(dim.getDimension());
      return emit(program, std::move(in));
    }
    if (auto dim = dyn_cast<gpu::GridDimOp>(op)) {
      Inst in = scalarInst(op, uniformIdOp);
      in.imm = 2;
      in.imm2 = static_cast<int64_t>(dim.getDimension());
      return emit(program, std::move(in));
    }
    if (isa<gpu::LaneIdOp>(op))
      return emit(program, scalarInst(op, laneIdOp));
    if (isa<NVVM::Clock64Op>(op))
      return emit(program, scalarInst(op, clockOp));
    if (isa<NVVM::GlobalTimerOp>(op))
      return emit(program, scalarInst(op, globalTimerOp));
    if (auto print = dyn_cast<gpu::PrintfOp>(op)) {
      checkPrintf(print);
      Inst in;
      in.fn = printfOp;
      in.op = &op;
      for (Value arg : print.getArgs())
        in.ins.push_back(use(arg, &op));
      return emit(program, std::move(in));
    }
    if (isa<gpu::BarrierOp>(op)) {
      Inst in;
      in.fn = barrierOp;
      in.op = &op;
      return emit(program, std::move(in));
    }
    if (auto shuffle = dyn_cast<gpu::ShuffleOp>(op)) {
      if (wordsOf(shuffle.getValue().getType()) != 1 ||
          isa<VectorType>(shuffle.getValue().getType()))
        failCompile(k.name, &op, "shuffles of vectors are not emulated");
      Inst in;
      in.fn = shuffleOp;
      in.op = &op;
      in.ins = {use(shuffle.getValue(), &op), use(shuffle.getOffset(), &op),
                use(shuffle.getWidth(), &op)};
      in.outs = {define(shuffle.getShuffleResult(), &op),
                 define(shuffle.getValid(), &op)};
      in.imm = static_cast<int64_t>(shuffle.getMode());
      return emit(program, std::move(in));
    }

    // Memory.
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      uint32_t buffer = bufferOf(load.getMemref(), &op);
      const BufferInfo &info = k.buffers[buffer];
      Inst in;
      in.op = &op;
      in.imm = buffer;
      if (wordsOf(load.getType()) != 1)
        failCompile(k.name, &op, "loads of vectors are not emulated");
      if (info.rank == 1) {
        in.a = use(load.getIndices()[0], &op).offset;
        in.fn = loadHandler(info.elementBytes, info.shared);
      } else {
        for (Value index : load.getIndices())
          in.ins.push_back(use(index, &op));
        in.fn = loadRankedHandler(info.elementBytes);
      }
      in.r = define(load.getResult(), &op).offset;
      return emit(program, std::move(in));
    }
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      uint32_t buffer = bufferOf(store.getMemref(), &op);
      k.buffers[buffer].stored = true;
      const BufferInfo &info = k.buffers[buffer];
      Inst in;
      in.op = &op;
      in.imm = buffer;
      if (info.rank == 1) {
        in.a = use(store.getValueToStore(), &op).offset;
        in.b = use(store.getIndices()[0], &op).offset;
        in.fn = storeHandler(info.elementBytes, info.shared);
      } else {
        in.ins.push_back(use(store.getValueToStore(), &op));
        for (Value index : store.getIndices())
          in.ins.push_back(use(index, &op));
        in.fn = storeRankedHandler(info.elementBytes);
      }
      return emit(program, std::move(in));
    }
    if (auto dim = dyn_cast<memref::DimOp>(op)) {
      std::optional<int64_t> index = dim.getConstantIndex();
      if (!index)
        failCompile(k.name, &op, "memref.dim with a dynamic dimension");
      Inst in;
      in.fn = dimOp;
      in.op = &op;
      in.imm = bufferOf(dim.getSource(), &op);
      in.imm2 = *index;
      in.r = define(dim.getResult(), &op).offset;
      return emit(program, std::move(in));
    }

    if (auto load = dyn_cast<vector::LoadOp>(op))
      return compileVectorAccess(op, load.getBase(), load.getIndices(), Value(),
                                 load.getResult(), load.getAlignment(),
                                 program);
    if (auto store = dyn_cast<vector::StoreOp>(op))
      return compileVectorAccess(op, store.getBase(), store.getIndices(),
                                 store.getValueToStore(), Value(),
                                 store.getAlignment(), program);
    if (auto pointer = dyn_cast<memref::ExtractAlignedPointerAsIndexOp>(op)) {
      uint32_t buffer = bufferOf(pointer.getSource(), &op);
      // A workgroup buffer's address in the shared memory window.
      if (k.buffers[buffer].shared) {
        Slot s = define(pointer.getResult(), &op);
        k.constants.push_back(
            {s.offset, static_cast<Word>(k.buffers[buffer].sharedAddress)});
        return;
      }
      Inst in;
      in.fn = alignedPointerOp;
      in.op = &op;
      in.imm = buffer;
      in.r = define(pointer.getResult(), &op).offset;
      return emit(program, std::move(in));
    }

    // Vectors and LLVM structs.
    if (auto fromElements = dyn_cast<vector::FromElementsOp>(op)) {
      Inst in;
      in.fn = fromElementsOp;
      in.op = &op;
      for (Value element : fromElements.getElements())
        in.ins.push_back(use(element, &op));
      in.r = define(fromElements.getResult(), &op).offset;
      return emit(program, std::move(in));
    }
    if (auto extract = dyn_cast<vector::ExtractOp>(op)) {
      if (!extract.getDynamicPosition().empty())
        failCompile(k.name, &op, "vector.extract at a dynamic position");
      Inst in;
      in.fn = extractOp;
      in.op = &op;
      in.a = use(extract.getSource(), &op).offset;
      Slot r = define(extract.getResult(), &op);
      in.r = r.offset;
      in.imm = wordPosition(&op, extract.getSourceVectorType().getShape(),
                            extract.getStaticPosition(), r.words);
      in.imm2 = r.words;
      return emit(program, std::move(in));
    }
    if (auto insert = dyn_cast<vector::InsertOp>(op)) {
      if (!insert.getDynamicPosition().empty())
        failCompile(k.name, &op, "vector.insert at a dynamic position");
      Value value = insert.getValueToStore();
      return emitInsert(op, insert.getDest(), value, insert.getResult(),
                        wordPosition(&op, insert.getDestVectorType().getShape(),
                                     insert.getStaticPosition(),
                                     wordsOf(value.getType())),
                        program);
    }
    if (auto broadcast = dyn_cast<vector::BroadcastOp>(op)) {
      if (wordsOf(broadcast.getSource().getType()) != 1)
        failCompile(k.name, &op, "vector.broadcast of a vector");
      Inst in;
      in.fn = broadcastOp;
      in.op = &op;
      in.a = use(broadcast.getSource(), &op).offset;
      Slot r = define(broadcast.getResult(), &op);
      in.r = r.offset;
      in.imm = r.words;
      return emit(program, std::move(in));
    }
    if (auto bitcast = dyn_cast<vector::BitCastOp>(op)) {
      VectorType from = bitcast.getSourceVectorType();
      VectorType to = bitcast.getResultVectorType();
      unsigned fromBits = from.getElementTypeBitWidth();
      unsigned toBits = to.getElementTypeBitWidth();
      if (from.getRank() != 1 || fromBits % 8 || toBits % 8 ||
          from.getNumElements() * fromBits > 512)
        failCompile(k.name, &op, "this vector.bitcast is not emulated");
      Inst in;
      in.fn = bitcastOp;
      in.op = &op;
      in.ins = {use(bitcast.getSource(), &op)};
      in.outs = {define(bitcast.getResult(), &op)};
      in.imm = fromBits;
      in.imm2 = toBits;
      return emit(program, std::move(in));
    }
    if (auto extract = dyn_cast<LLVM::ExtractValueOp>(op)) {
      uint32_t at = structWord(op, extract.getContainer().getType(),
                               extract.getPosition());
      // A word of a wgmma's accumulators that only register-A wgmmas take
      // on is passed along in the same registers, not read: a chain of
      // them is completed by the wait after its group. Every other use
      // reads it, which must wait for the wait.
      bool chained = llvm::all_of(extract->getUsers(), [](Operation *user) {
        return registerAWgmmaN(user).has_value();
      });
      Inst in;
      in.fn = k.wgmma && !chained ? extractCheckedOp : extractOp;
      in.op = &op;
      in.a = use(extract.getContainer(), &op).offset;
      Slot r = define(extract.getResult(), &op);
      in.r = r.offset;
      in.imm = at;
      in.imm2 = r.words;
      return emit(program, std::move(in));
    }
    if (auto insert = dyn_cast<LLVM::InsertValueOp>(op)) {
      return emitInsert(
          op, insert.getContainer(), insert.getValue(), insert.getResult(),
          structWord(op, insert.getContainer().getType(), insert.getPosition()),
          program);
    }
    if (auto inlineAsm = dyn_cast<LLVM::InlineAsmOp>(op)) {
      if (registerAWgmmaN(inlineAsm))
        return compileWgmmaRegisterA(inlineAsm, program);
      if (inlineAsm.getAsmString() != mlir::linattn::kPrefetchL2Asm ||
          inlineAsm.getOperands().size() != 1 || inlineAsm.getNumResults())
        failCompile(k.name, &op,
                    "inline PTX other than the prefetch \"" +
                        mlir::linattn::kPrefetchL2Asm.str() +
                        "\" is not emulated");
      Inst in;
      in.fn = prefetchOp;
      in.op = &op;
      in.a = use(inlineAsm.getOperands()[0], &op).offset;
      return emit(program, std::move(in));
    }
    if (auto call = dyn_cast<LLVM::CallIntrinsicOp>(op)) {
      if (call.getIntrin() != mlir::linattn::kEx2ApproxFtzIntrinsic ||
          call.getArgs().size() != 1 || call.getNumResults() != 1 ||
          !call.getArgs()[0].getType().isF32() ||
          !call.getResult(0).getType().isF32())
        failCompile(k.name, &op,
                    "intrinsics other than " +
                        mlir::linattn::kEx2ApproxFtzIntrinsic.str() +
                        " (f32) are not emulated");
      Inst in;
      in.fn = ex2ApproxFtzOp;
      in.op = &op;
      in.a = use(call.getArgs()[0], &op).offset;
      in.r = define(call.getResult(0), &op).offset;
      return emit(program, std::move(in));
    }
    // Undefined values read as zeros.
    if (isa<LLVM::UndefOp, LLVM::PoisonOp, LLVM::ZeroOp>(op)) {
      Slot s = define(op.getResult(0), &op);
      for (uint32_t w = 0; w < s.words; ++w)
        k.constants.push_back({s.offset + w, 0});
      return;
    }
    if (isa<LLVM::IntToPtrOp, LLVM::AddrSpaceCastOp>(op)) {
      Inst in;
      in.fn = pointerCastOp;
      in.op = &op;
      in.a = use(op.getOperand(0), &op).offset;
      in.r = define(op.getResult(0), &op).offset;
      return emit(program, std::move(in));
    }
    if (isa<NVVM::MBarrierInitOp, NVVM::MBarrierInvalOp,
            NVVM::MBarrierArriveExpectTxOp, NVVM::MBarrierTryWaitParityOp>(op))
      return compileMBarrier(op, program);
    if (auto copy = dyn_cast<NVVM::CpAsyncBulkGlobalToSharedClusterOp>(op)) {
      if (copy.getMulticastMask() || copy.getL2CacheHint())
        failCompile(k.name, &op,
                    "bulk copies with a multicast mask or a cache hint are "
                    "not emulated");
      Inst in;
      in.fn = bulkCopyOp;
      in.op = &op;
      for (Value operand : {Value(copy.getDstMem()), Value(copy.getSrcMem()),
                            Value(copy.getMbar()), Value(copy.getSize())})
        in.ins.push_back(use(operand, &op));
      return emit(program, std::move(in));
    }
    if (auto wgmma = dyn_cast<NVVM::WgmmaMmaAsyncOp>(op))
      return compileWgmma(wgmma, program);
    if (isa<NVVM::WgmmaFenceAlignedOp, NVVM::WgmmaGroupSyncAlignedOp,
            NVVM::WgmmaWaitGroupSyncOp>(op)) {
      Inst in;
      in.op = &op;
      if (auto wait = dyn_cast<NVVM::WgmmaWaitGroupSyncOp>(op)) {
        in.fn = wgmmaWaitOp;
        in.imm = wait.getGroup();
      } else {
        in.fn =
            isa<NVVM::WgmmaFenceAlignedOp>(op) ? wgmmaFenceOp : wgmmaCommitOp;
      }
      return emit(program, std::move(in));
    }
    if (auto fence = dyn_cast<NVVM::FenceProxyOp>(op)) {
      if (fence.getKind() != NVVM::ProxyKind::async_shared &&
          fence.getKind() != NVVM::ProxyKind::async)
        failCompile(k.name, &op,
                    "only nvvm.fence.proxy of the async or async.shared proxy "
                    "is emulated");
      Inst in;
      in.fn = proxyFenceOp;
      in.op = &op;
      return emit(program, std::move(in));
    }
    if (auto mma = dyn_cast<NVVM::MmaOp>(op))
      return compileMma(mma, program);
    if (auto ldmatrix = dyn_cast<nvgpu::LdMatrixOp>(op)) {
      uint32_t buffer = bufferOf(ldmatrix.getSrcMemref(), &op);
      const BufferInfo &info = k.buffers[buffer];
      auto type = cast<VectorType>(ldmatrix.getRes().getType());
      uint32_t matrices = ldmatrix.getNumTiles();
      if (!info.shared || info.rank != 1)
        failCompile(k.name, &op,
                    "nvgpu.ldmatrix from other than a rank-1 workgroup buffer");
      if (info.alignment < 16)
        failCompile(k.name, &op,
                    "nvgpu.ldmatrix from workgroup buffer #" +
                        std::to_string(info.index) +
                        ", which is not 16-byte aligned (llvm.align)");
      if ((info.elementBytes != 2 && info.elementBytes != 4) ||
          (matrices != 1 && matrices != 2 && matrices != 4) ||
          type.getRank() != 2 || type.getDimSize(0) != matrices ||
          type.getDimSize(1) * info.elementBytes != 4 ||
          (ldmatrix.getTranspose() && info.elementBytes != 2))
        failCompile(k.name, &op, "this nvgpu.ldmatrix is not emulated");
      Inst in;
      in.fn = ldmatrixOp;
      in.op = &op;
      in.imm = buffer;
      in.imm2 = matrices | (ldmatrix.getTranspose() ? 1 << 8 : 0);
      in.a = use(ldmatrix.getIndices()[0], &op).offset;
      in.r = define(ldmatrix.getRes(), &op).offset;
      return emit(program, std::move(in));
    }
    if (auto copy = dyn_cast<nvgpu::DeviceAsyncCopyOp>(op))
      return compileAsyncCopy(copy, program);
    if (isa<nvgpu::DeviceAsyncCreateGroupOp, NVVM::CpAsyncCommitGroupOp>(op)) {
      Inst in;
      in.fn = asyncCommitOp;
      in.op = &op;
      return emit(program, std::move(in));
    }
    if (isa<nvgpu::DeviceAsyncWaitOp, NVVM::CpAsyncWaitGroupOp>(op)) {
      Inst in;
      in.fn = asyncWaitOp;
      in.op = &op;
      // The groups left in flight.
      auto wait = dyn_cast<nvgpu::DeviceAsyncWaitOp>(op);
      in.imm = wait ? wait.getNumGroups().value_or(0)
                    : cast<NVVM::CpAsyncWaitGroupOp>(op).getN();
      return emit(program, std::move(in));
    }
    if (auto cvt = dyn_cast<NVVM::ConvertFloatToTF32Op>(op)) {
      if (cvt.getRnd() != NVVM::FPRoundingMode::RNA ||
          cvt.getSat() != NVVM::SaturationMode::NONE || cvt.getRelu())
        failCompile(k.name, &op,
                    "only nvvm.convert.float.to.tf32 with rna rounding, no "
                    "saturation and no relu is emulated");
      return emit(program, scalarInst(op, convertToTF32Op));
    }

    // Structured control flow.
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      Type ivType = loop.getInductionVar().getType();
      if (!ivType.isIndex() && !ivType.isInteger(64) && !ivType.isInteger(32))
        failCompile(k.name, &op,
                    "scf.for over a type other than index, i64 or i32");
      Inst in;
      in.fn = ivType.isInteger(32) ? forOp<32> : forOp<64>;
      in.op = &op;
      in.a = use(loop.getLowerBound(), &op).offset;
      in.b = use(loop.getUpperBound(), &op).offset;
      in.c = use(loop.getStep(), &op).offset;
      in.imm = loop.getUnsignedCmp() ? 1 : 0;
      for (Value init : loop.getInitArgs())
        in.ins.push_back(use(init, &op));
      uint32_t body = newProgram();
      Block &block = loop.getRegion().front();
      SmallVector<Slot, 4> args;
      for (BlockArgument arg : block.getArguments())
        args.push_back(define(arg, &op));
      k.programs[body].args = args;
      compileBlock(block, body, depth + 1);
      Program &p = k.programs[body];
      for (size_t j = 0; j < p.yields.size(); ++j)
        for (size_t i = 1; i < p.args.size(); ++i)
          if (i != j + 1 && p.yields[j].offset == p.args[i].offset)
            p.yieldsAlias = true;
      in.region[0] = body;
      for (Value result : loop.getResults())
        in.outs.push_back(define(result, &op));
      return emit(program, std::move(in));
    }
    if (auto branch = dyn_cast<scf::IfOp>(op)) {
      Inst in;
      in.fn = ifOp;
      in.op = &op;
      in.a = use(branch.getCondition(), &op).offset;
      for (Value result : branch.getResults())
        in.outs.push_back(define(result, &op));
      uint32_t thenProgram = newProgram();
      compileBlock(branch.getThenRegion().front(), thenProgram, depth + 1);
      in.region[0] = thenProgram;
      if (!branch.getElseRegion().empty()) {
        uint32_t elseProgram = newProgram();
        compileBlock(branch.getElseRegion().front(), elseProgram, depth + 1);
        in.region[1] = elseProgram;
      }
      return emit(program, std::move(in));
    }

    failCompile(k.name, &op,
                "unsupported op '" + op.getName().getStringRef().str() +
                    "': the emulator does not know it");
  }

  /// vector.load (into `result`) or vector.store (of `value`) of 1 to 8
  /// elements of a rank-1 buffer. The address must be a multiple of the
  /// `alignment` attribute, else of the element size (what the LLVM lowering
  /// assumes); a workgroup buffer must be declared that aligned.
  void compileVectorAccess(Operation &op, Value memref, ValueRange indices,
                           Value value, Value result,
                           std::optional<uint64_t> alignment,
                           uint32_t program) {
    bool isLoad = static_cast<bool>(result);
    std::string name = op.getName().getStringRef().str();
    uint32_t buffer = bufferOf(memref, &op);
    if (!isLoad)
      k.buffers[buffer].stored = true;
    const BufferInfo &info = k.buffers[buffer];
    auto type = cast<VectorType>(isLoad ? result.getType() : value.getType());
    if (info.rank != 1 || type.getRank() != 1 || type.isScalable() ||
        type.getNumElements() < 1 || type.getNumElements() > 8)
      failCompile(k.name, &op,
                  "only " + name +
                      " of 1 to 8 elements of a rank-1 buffer is emulated");
    int64_t bytes =
        alignment ? static_cast<int64_t>(*alignment) : info.elementBytes;
    if (info.shared && info.alignment < bytes)
      failCompile(k.name, &op,
                  name + (isLoad ? " from" : " to") + " workgroup buffer #" +
                      std::to_string(info.index) + ", which is not " +
                      std::to_string(bytes) + "-byte aligned (llvm.align)");
    Inst in;
    in.op = &op;
    in.imm = buffer;
    in.imm2 = type.getNumElements() | bytes << 8;
    in.fn = vectorHandler(info.elementBytes, isLoad, info.shared);
    if (isLoad) {
      in.a = use(indices[0], &op).offset;
      in.r = define(result, &op).offset;
    } else {
      in.a = use(value, &op).offset;
      in.b = use(indices[0], &op).offset;
    }
    emit(program, std::move(in));
  }

  /// vector.insert or llvm.insertvalue: `result` is `dest` with `value` at
  /// its word `at`.
  void emitInsert(Operation &op, Value dest, Value value, Value result,
                  int64_t at, uint32_t program) {
    Inst in;
    in.fn = insertOp;
    in.op = &op;
    Slot inserted = use(value, &op);
    in.ins = {use(dest, &op), inserted};
    in.r = define(result, &op).offset;
    in.imm = at;
    in.imm2 = inserted.words;
    emit(program, std::move(in));
  }

  /// The first word of the member at `position` of a struct of `type`, for
  /// llvm.extractvalue and llvm.insertvalue (one position only).
  uint32_t structWord(Operation &op, Type type, ArrayRef<int64_t> position) {
    auto structType = dyn_cast<LLVM::LLVMStructType>(type);
    if (!structType || position.size() != 1)
      failCompile(k.name, &op,
                  op.getName().getStringRef().str() +
                      " other than one position of a struct");
    uint32_t at = 0;
    for (int64_t i = 0; i < position[0]; ++i)
      at += wordsOf(structType.getBody()[i]);
    return at;
  }

  /// nvvm.wgmma.mma_async m64nNk16 of f16 or bf16 (K-major or MN-major
  /// operands) and m64nNk8 of tf32 (K-major), f32 accumulators.
  void compileWgmma(NVVM::WgmmaMmaAsyncOp wgmma, uint32_t program) {
    Operation *op = wgmma;
    NVVM::MMAShapeAttr shape = wgmma.getShape();
    NVVM::WGMMATypes typeA = wgmma.getTypeA(), typeB = wgmma.getTypeB();
    unsigned type = typeA == NVVM::WGMMATypes::f16    ? 0
                    : typeA == NVVM::WGMMATypes::bf16 ? 1
                    : typeA == NVVM::WGMMATypes::tf32 ? 2
                                                      : 3;
    int n = shape.getN();
    bool mnA = wgmma.getLayoutA() == NVVM::MMALayout::col;
    bool mnB = wgmma.getLayoutB() == NVVM::MMALayout::row;
    auto result = dyn_cast<LLVM::LLVMStructType>(wgmma.getResults().getType());
    bool supported =
        type < 3 && typeB == typeA &&
        wgmma.getTypeD() == NVVM::WGMMATypes::f32 && shape.getM() == 64 &&
        n >= 8 && n <= 256 && n % 8 == 0 &&
        shape.getK() == (type == 2 ? 8 : 16) && !(type == 2 && (mnA || mnB)) &&
        !wgmma.getSatfinite() && result &&
        result.getBody().size() == static_cast<size_t>(n / 2) &&
        llvm::all_of(result.getBody(), [](Type t) { return t.isF32(); });
    if (!supported)
      failCompile(k.name, op,
                  "only nvvm.wgmma.mma_async m64nNk16 of f16 or bf16 and "
                  "m64nNk8 of tf32 (K-major), with f32 accumulators and no "
                  "satfinite, is emulated");
    Inst in;
    in.fn = wgmmaOp;
    in.op = op;
    in.ins = {use(wgmma.getInouts(), op), use(wgmma.getDescriptorA(), op),
              use(wgmma.getDescriptorB(), op)};
    in.outs = {define(wgmma.getResults(), op)};
    in.imm = n | type << 16 | int64_t(mnA) << 20 | int64_t(mnB) << 21 |
             int64_t(wgmma.getScaleD() == NVVM::WGMMAScaleOut::one) << 22 |
             int64_t(wgmma.getScaleA() == NVVM::WGMMAScaleIn::neg) << 23 |
             int64_t(wgmma.getScaleB() == NVVM::WGMMAScaleIn::neg) << 24;
    emit(program, std::move(in));
  }

  /// `wgmmaRegisterAAsm` of f16 or bf16 (the strings the chunk loops
  /// emit, checked operand by operand): ins = the four A registers, the B
  /// descriptor, scale-d and the N / 2 accumulators; wgmmaOp as for
  /// nvvm.wgmma.mma_async, with A from the threads' registers.
  void compileWgmmaRegisterA(LLVM::InlineAsmOp wgmma, uint32_t program) {
    Operation *op = wgmma;
    int64_t n = *registerAWgmmaN(op);
    bool bf16 =
        wgmma.getAsmString() == mlir::linattn::wgmmaRegisterAAsm(n, true);
    Type i32 = IntegerType::get(op->getContext(), 32);
    Type i64 = IntegerType::get(op->getContext(), 64);
    OperandRange operands = wgmma.getOperands();
    bool supported =
        operands.size() == static_cast<size_t>(6 + n / 2) &&
        wgmma.getConstraints() == mlir::linattn::wgmmaRegisterAConstraints(n) &&
        operands[4].getType() == i64 && operands[5].getType() == i32;
    for (Value v : operands.take_front(4))
      supported = supported && v.getType() == i32;
    for (Value v : operands.drop_front(6))
      supported = supported && v.getType().isF32();
    if (!supported)
      failCompile(k.name, op,
                  "register-A wgmma asm whose operands are not four i32 A "
                  "registers, an i64 descriptor, an i32 scale-d and its f32 "
                  "accumulators");
    Inst in;
    in.fn = wgmmaOp;
    in.op = op;
    for (Value v : operands)
      in.ins.push_back(use(v, op));
    in.outs = {define(wgmma.getResult(0), op)};
    in.imm =
        n | int64_t(bf16 ? 1 : 0) << 16 | int64_t(1) << 21 | int64_t(1) << 25;
    emit(program, std::move(in));
  }

  void compileMma(NVVM::MmaOp mma, uint32_t program) {
    Operation *op = mma;
    NVVM::MMAShapeAttr shape = mma.getShape();
    auto typeA = mma.getMultiplicandAPtxType();
    auto typeB = mma.getMultiplicandBPtxType();
    if (typeA && typeB && *typeA == NVVM::MMATypes::tf32 &&
        *typeB == NVVM::MMATypes::tf32)
      return compileMmaTF32(mma, program);
    bool supported =
        shape.getM() == 16 && shape.getN() == 8 && shape.getK() == 16 &&
        mma.getLayoutA() == NVVM::MMALayout::row &&
        mma.getLayoutB() == NVVM::MMALayout::col && typeA && typeB &&
        *typeA == *typeB &&
        (*typeA == NVVM::MMATypes::f16 || *typeA == NVVM::MMATypes::bf16) &&
        mma.getOperandA().size() == 4 && mma.getOperandB().size() == 2 &&
        mma.getOperandC().size() == 4;
    auto result = dyn_cast<LLVM::LLVMStructType>(mma.getRes().getType());
    supported =
        supported && result && result.getBody().size() == 4 &&
        llvm::all_of(result.getBody(), [](Type t) { return t.isF32(); });
    for (Value c : mma.getOperandC())
      supported = supported && c.getType().isF32();
    Type regType = mma.getOperandA()[0].getType();
    bool packed = regType.isInteger(32);
    auto vector = dyn_cast<VectorType>(regType);
    supported =
        supported && (packed || (vector && vector.getNumElements() == 2 &&
                                 vector.getElementTypeBitWidth() == 16));
    for (Value v : llvm::concat<Value>(mma.getOperandA(), mma.getOperandB()))
      supported = supported && v.getType() == regType;
    if (!supported)
      failCompile(k.name, op,
                  "only nvvm.mma.sync m16n8k16 with f16 or bf16 A and B "
                  "(row, col) and f32 accumulators is emulated");
    Inst in;
    in.fn = mmaOp;
    in.op = op;
    for (Value v : mma.getOperandA())
      in.ins.push_back(use(v, op));
    for (Value v : mma.getOperandB())
      in.ins.push_back(use(v, op));
    for (Value v : mma.getOperandC())
      in.ins.push_back(use(v, op));
    in.outs = {define(mma.getRes(), op)};
    in.imm = *typeA == NVVM::MMATypes::bf16 ? 1 : 0;
    in.imm2 = packed ? 1 : 0;
    emit(program, std::move(in));
  }

  void compileMmaTF32(NVVM::MmaOp mma, uint32_t program) {
    Operation *op = mma;
    NVVM::MMAShapeAttr shape = mma.getShape();
    auto result = dyn_cast<LLVM::LLVMStructType>(mma.getRes().getType());
    bool supported =
        shape.getM() == 16 && shape.getN() == 8 && shape.getK() == 8 &&
        mma.getLayoutA() == NVVM::MMALayout::row &&
        mma.getLayoutB() == NVVM::MMALayout::col &&
        mma.getOperandA().size() == 4 && mma.getOperandB().size() == 2 &&
        mma.getOperandC().size() == 4 && result &&
        result.getBody().size() == 4 &&
        llvm::all_of(result.getBody(), [](Type t) { return t.isF32(); });
    for (Value v : llvm::concat<Value>(mma.getOperandA(), mma.getOperandB()))
      supported = supported && v.getType().isInteger(32);
    for (Value c : mma.getOperandC())
      supported = supported && c.getType().isF32();
    if (!supported)
      failCompile(k.name, op,
                  "only nvvm.mma.sync m16n8k8 with tf32 A and B in i32 "
                  "registers (row, col) and f32 accumulators is emulated");
    Inst in;
    in.fn = mmaTF32Op;
    in.op = op;
    for (Value v : llvm::concat<Value>(mma.getOperandA(), mma.getOperandB(),
                                       mma.getOperandC()))
      in.ins.push_back(use(v, op));
    in.outs = {define(mma.getRes(), op)};
    emit(program, std::move(in));
  }

  template <unsigned Bytes>
  static Handler loadFor(bool shared) {
    return shared ? loadOp<Bytes, true> : loadOp<Bytes, false>;
  }
  template <unsigned Bytes>
  static Handler storeFor(bool shared) {
    return shared ? storeOp<Bytes, true> : storeOp<Bytes, false>;
  }
  static Handler loadHandler(unsigned bytes, bool shared) {
    switch (bytes) {
    case 1:
      return loadFor<1>(shared);
    case 2:
      return loadFor<2>(shared);
    case 4:
      return loadFor<4>(shared);
    default:
      return loadFor<8>(shared);
    }
  }
  static Handler storeHandler(unsigned bytes, bool shared) {
    switch (bytes) {
    case 1:
      return storeFor<1>(shared);
    case 2:
      return storeFor<2>(shared);
    case 4:
      return storeFor<4>(shared);
    default:
      return storeFor<8>(shared);
    }
  }
  template <unsigned Bytes>
  static Handler vectorFor(bool load, bool shared) {
    if (load)
      return shared ? vectorAccessOp<Bytes, true, false>
                    : vectorAccessOp<Bytes, false, false>;
    return shared ? vectorAccessOp<Bytes, true, true>
                  : vectorAccessOp<Bytes, false, true>;
  }
  static Handler vectorHandler(unsigned bytes, bool load, bool shared) {
    switch (bytes) {
    case 1:
      return vectorFor<1>(load, shared);
    case 2:
      return vectorFor<2>(load, shared);
    case 4:
      return vectorFor<4>(load, shared);
    default:
      return vectorFor<8>(load, shared);
    }
  }
  static Handler loadRankedHandler(unsigned bytes) {
    switch (bytes) {
    case 1:
      return loadOpRanked<1>;
    case 2:
      return loadOpRanked<2>;
    case 4:
      return loadOpRanked<4>;
    default:
      return loadOpRanked<8>;
    }
  }
  static Handler storeRankedHandler(unsigned bytes) {
    switch (bytes) {
    case 1:
      return storeOpRanked<1>;
    case 2:
      return storeOpRanked<2>;
    case 4:
      return storeOpRanked<4>;
    default:
      return storeOpRanked<8>;
    }
  }

  Kernel &k;
  llvm::DenseMap<Value, Slot> slots;
  llvm::DenseMap<Value, uint32_t> buffers;
  uint32_t next = 0;
};

} // namespace

void compileKernel(Kernel &k) { Compiler(k).compile(); }

} // namespace detail
} // namespace linattn::gpu_emulator
