#include "runtime/kernels/cpu/bf16_product.h"

#include <glog/logging.h>

#include <algorithm>
#include <vector>

#include "base/cpu_features.h"
#include "runtime/kernels/cpu/gemm_shape.h"
#include "runtime/kernels/cpu/parallel_for.h"
#include "runtime/kernels/cpu/thread_buffers.h"

#ifdef SOFTWIRE_HAVE_DNNL
#include <omp.h>

#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace softwire {
namespace runtime {
namespace {

// Both inputs widened to float32, then sgemm: the product of the same bf16 values.
class WideningProduct final : public Bf16Product {
 public:
  explicit WideningProduct(const Bf16ProductShape& shape)
      : shape_(shape),
        a_(static_cast<size_t>(shape.m * shape.k)),
        b_(static_cast<size_t>(shape.k * shape.n)) {
    gemm_.transpose_a = shape.transpose_a;
    gemm_.transpose_b = shape.transpose_b;
    gemm_.m = shape.m;
    gemm_.n = shape.n;
    gemm_.k = shape.k;
  }

  using Bf16Product::Run;
  void Run(ParallelRunner* parallel, const BFloat16* a, const BFloat16* b,
           ProductEpilogue& epilogue) override {
    Widen(parallel, a, a_.data(), static_cast<int64_t>(a_.size()));
    Widen(parallel, b, b_.data(), static_cast<int64_t>(b_.size()));
    gemm_.RunParallel(parallel, a_.data(), b_.data(), epilogue);
  }

  std::string implementation() const override { return "float32 fallback (openblas sgemm)"; }
  bool native() const override { return false; }
  const Bf16ProductShape& shape() const override { return shape_; }

 private:
  static void Widen(ParallelRunner* parallel, const BFloat16* from, float* to, int64_t count) {
    ParallelFor(parallel, count, MinChunkFor(1), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) to[i] = ToFloat(from[i]);
    });
  }

  const Bf16ProductShape shape_;
  GemmShape gemm_;
  std::vector<float> a_;
  std::vector<float> b_;
};

#ifdef SOFTWIRE_HAVE_DNNL
using dnnl::memory;

// Products below this many multiply-adds run as one band on the calling thread.
constexpr int64_t kBandedWork = int64_t{4} * 65536;

// One band of rows [row_begin, row_begin + rows) of c, with everything its execution needs, so
// Run creates nothing: the primitive, memory objects whose handles Run points at the slots,
// a stream of its own (bands run concurrently); its scratchpad is the executing thread's
// (thread_buffers.h).
struct Band {
  int64_t row_begin = 0;
  int64_t rows = 0;
  dnnl::matmul primitive;
  memory a;
  memory b;
  memory c;
  memory scratchpad;  // Its bytes: ThreadBuffer's, set per execution.
  size_t scratchpad_bytes = 0;
  dnnl::stream stream;
};

class OneDnnProduct final : public Bf16Product {
 public:
  static StatusOr<std::unique_ptr<Bf16Product>> Create(const Bf16ProductShape& shape) {
    std::unique_ptr<OneDnnProduct> product(new OneDnnProduct(shape));
    try {
      product->MakeBands();
    } catch (const dnnl::error& error) {
      return InvalidArgumentError(std::string("oneDNN rejects a bf16 product: ") + error.what());
    }
    return std::unique_ptr<Bf16Product>(std::move(product));
  }

  using Bf16Product::Run;
  void Run(ParallelRunner* parallel, const BFloat16* a, const BFloat16* b,
           ProductEpilogue& epilogue) override {
    // One band runs on the calling thread, outside any parallel loop: its epilogue may spread.
    ParallelRunner* outside = bands_.size() == 1 ? parallel : nullptr;
    auto run_bands = [&](int64_t begin, int64_t end) {
      // oneDNN runs on the calling thread only: one OpenMP thread for this thread's regions.
      omp_set_num_threads(1);
      for (int64_t index = begin; index < end; ++index) {
        Band& band = bands_[index];
        float* rows = epilogue.Rows(band.row_begin, band.row_begin + band.rows);
        RunBand(band, a, b, rows);
        epilogue.Written(rows, band.row_begin, band.row_begin + band.rows, outside);
      }
    };
    if (bands_.size() == 1) {
      run_bands(0, 1);
    } else {
      ParallelFor(parallel, static_cast<int64_t>(bands_.size()), 1, run_bands);
    }
  }

  // Small products (one band each) whole, spread over lanes: lane i runs products i, i +
  // lanes, ... with its own stream, so lanes run concurrently.
  void RunBatch(ParallelRunner* parallel, const BFloat16* a, const BFloat16* b, float* c,
                int64_t batch) override {
    if (bands_.size() > 1 || batch <= 1) {
      Bf16Product::RunBatch(parallel, a, b, c, batch);
      return;
    }
    const int64_t lanes = std::min<int64_t>(static_cast<int64_t>(lanes_.size()), batch);
    const int64_t a_size = shape_.m * shape_.k, b_size = shape_.k * shape_.n,
                  c_size = shape_.m * shape_.n;
    // Spread only when a lane's products are worth a hand-off (kernels' kMinParallelWork).
    const int64_t work = shape_.m * shape_.n * shape_.k;
    ParallelFor(parallel, lanes, std::max<int64_t>(1, MinChunkFor(work * batch / lanes)),
                [&](int64_t begin, int64_t end) {
                  omp_set_num_threads(1);
                  for (int64_t lane = begin; lane < end; ++lane) {
                    for (int64_t index = lane; index < batch; index += lanes) {
                      RunBand(lanes_[lane], a + index * a_size, b + index * b_size,
                              c + index * c_size + lanes_[lane].row_begin * shape_.n);
                    }
                  }
                });
  }

  std::string implementation() const override { return "onednn " + implementation_; }
  bool native() const override { return true; }
  const Bf16ProductShape& shape() const override { return shape_; }

 private:
  explicit OneDnnProduct(const Bf16ProductShape& shape)
      : shape_(shape), engine_(dnnl::engine::kind::cpu, 0) {}

  // Bands of at least 64 rows, at most 8 of them, of at most two sizes (so two primitives'
  // worth of creation): enough for the device threads of these machines to share.
  void MakeBands() {
    const int64_t work = shape_.m * shape_.n * shape_.k;
    const int64_t count = work < kBandedWork ? 1 : std::clamp<int64_t>(shape_.m / 64, 1, 8);
    const int64_t rows = (shape_.m + count - 1) / count;
    dnnl::matmul::primitive_desc full_band;
    dnnl::matmul::primitive_desc last_band;
    for (int64_t begin = 0; begin < shape_.m; begin += rows) {
      Band band;
      band.row_begin = begin;
      band.rows = std::min(rows, shape_.m - begin);
      dnnl::matmul::primitive_desc& descriptor = band.rows == rows ? full_band : last_band;
      if (!descriptor) descriptor = Describe(band.rows);
      if (implementation_.empty()) implementation_ = descriptor.impl_info_str();
      band.primitive = dnnl::matmul(descriptor);
      band.a = memory(descriptor.src_desc(), engine_, DNNL_MEMORY_NONE);
      band.b = memory(descriptor.weights_desc(), engine_, DNNL_MEMORY_NONE);
      band.c = memory(descriptor.dst_desc(), engine_, DNNL_MEMORY_NONE);
      band.scratchpad_bytes = descriptor.scratchpad_desc().get_size();
      band.scratchpad = memory(descriptor.scratchpad_desc(), engine_, DNNL_MEMORY_NONE);
      band.stream = dnnl::stream(engine_);
      bands_.push_back(std::move(band));
    }
    if (bands_.size() == 1) {  // Lanes for batches of small products, sharing its primitive.
      for (int lane = 0; lane < kLanes; ++lane) lanes_.push_back(Copy(bands_[0], full_band));
    }
  }

  // A band like `band` (same rows, same primitive) with its own memory objects and stream.
  Band Copy(const Band& band, const dnnl::matmul::primitive_desc& descriptor) const {
    Band copy;
    copy.row_begin = band.row_begin;
    copy.rows = band.rows;
    copy.primitive = band.primitive;
    copy.a = memory(descriptor.src_desc(), engine_, DNNL_MEMORY_NONE);
    copy.b = memory(descriptor.weights_desc(), engine_, DNNL_MEMORY_NONE);
    copy.c = memory(descriptor.dst_desc(), engine_, DNNL_MEMORY_NONE);
    copy.scratchpad_bytes = band.scratchpad_bytes;
    copy.scratchpad = memory(descriptor.scratchpad_desc(), engine_, DNNL_MEMORY_NONE);
    copy.stream = dnnl::stream(engine_);
    return copy;
  }

  // The product of `rows` rows of op(a) with op(b): a, b and c described by strides, so a
  // transposed operand is read where it lies and a band of c is written in place.
  dnnl::matmul::primitive_desc Describe(int64_t rows) const {
    const int64_t m = shape_.m, n = shape_.n, k = shape_.k;
    memory::desc a({rows, k}, memory::data_type::bf16,
                   shape_.transpose_a ? memory::dims{1, m} : memory::dims{k, 1});
    memory::desc b({k, n}, memory::data_type::bf16,
                   shape_.transpose_b ? memory::dims{1, k} : memory::dims{n, 1});
    memory::desc c({rows, n}, memory::data_type::f32, memory::dims{n, 1});
    dnnl::primitive_attr attributes;
    attributes.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    return dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b, c), attributes, engine_);
  }

  // `c_rows`: where the band's first row of c goes (row stride N).
  void RunBand(Band& band, const BFloat16* a, const BFloat16* b, float* c_rows) const {
    const BFloat16* a_band =
        shape_.transpose_a ? a + band.row_begin : a + band.row_begin * shape_.k;
    band.a.set_data_handle(const_cast<BFloat16*>(a_band));
    band.b.set_data_handle(const_cast<BFloat16*>(b));
    band.c.set_data_handle(c_rows);
    band.scratchpad.set_data_handle(
        ThreadBuffer(ThreadBufferUse::kScratchpad, band.scratchpad_bytes));
    // The C interface takes the arguments as an array: no map to build per firing.
    dnnl_exec_arg_t arguments[] = {{DNNL_ARG_SRC, band.a.get()},
                                   {DNNL_ARG_WEIGHTS, band.b.get()},
                                   {DNNL_ARG_DST, band.c.get()},
                                   {DNNL_ARG_SCRATCHPAD, band.scratchpad.get()}};
    dnnl_primitive_execute(band.primitive.get(), band.stream.get(), 4, arguments);
  }

  // Lanes for batches of small products: enough for the device threads of these machines.
  static constexpr int kLanes = 8;

  const Bf16ProductShape shape_;
  dnnl::engine engine_;
  std::vector<Band> bands_;
  std::vector<Band> lanes_;  // Whole-product copies of bands_[0] when there is one band.
  std::string implementation_;
};
#endif

}  // namespace

void Bf16Product::RunBatch(ParallelRunner* parallel, const BFloat16* a, const BFloat16* b, float* c,
                           int64_t batch) {
  const Bf16ProductShape& s = shape();
  for (int64_t index = 0; index < batch; ++index) {
    Run(parallel, a + index * s.m * s.k, b + index * s.k * s.n, c + index * s.m * s.n);
  }
}

StatusOr<std::unique_ptr<Bf16Product>> Bf16Product::Create(const Bf16ProductShape& shape,
                                                           bool allow_native) {
#ifdef SOFTWIRE_HAVE_DNNL
  // oneDNN has no kernels for empty products worth calling; K = 0 writes zeros via sgemm's path.
  if (allow_native && shape.m > 0 && shape.n > 0 && shape.k > 0 &&
      DetectCpuFeatures().native_bf16()) {
    return OneDnnProduct::Create(shape);
  }
#endif
  if (allow_native) {
    const CpuFeatures cpu = DetectCpuFeatures();
    if (!cpu.native_bf16()) {
      LOG_FIRST_N(WARNING, 1) << "bf16 products on a cpu without " << cpu.MissingForBf16()
                              << ": they widen to float32 and multiply in float32, slower than "
                                 "a float32 plan (the casts cost, the products do not speed up)";
    }
  }
  return std::unique_ptr<Bf16Product>(new WideningProduct(shape));
}

}  // namespace runtime
}  // namespace softwire
