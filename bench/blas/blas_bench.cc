// blas_bench: single-precision GEMM throughput of OpenBLAS and oneDNN on the products of the
// MLP benchmark (784-1024-1024-10, batch 256: forward, input-gradient and weight-gradient
// products with their transposes) and on a square n = 2048 product, at a given thread count.
//
//   blas_bench --library=openblas --threads=2 [--samples=7] [--min_sample_ms=30]
//
// Prints one line per shape: name, transposes, M N K, and the median GFLOP/s of `samples`
// timed samples (each at least min_sample_ms of back-to-back calls after warm-up), then the
// time of one MLP step's products at those medians. Run one library and thread count per
// process (run_blas_bench.py does, interleaving rounds), so that neither library's idle
// threads compete with the other's.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#ifdef SOFTWIRE_HAVE_DNNL
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>
#endif

namespace {

struct GemmShape {
  const char* name;
  bool transpose_a;
  bool transpose_b;
  int64_t m;
  int64_t n;
  int64_t k;
  bool in_mlp_step;  // Part of one MLP training step.
};

// The MLP's products: layer l maps [256, in] to [256, out] with weight [in, out].
const std::vector<GemmShape> kShapes = {
    {"fc1 forward     x·W1", false, false, 256, 1024, 784, true},
    {"fc2 forward     h1·W2", false, false, 256, 1024, 1024, true},
    {"fc3 forward     h2·W3", false, false, 256, 10, 1024, true},
    {"fc3 input grad  d3·W3^T", false, true, 256, 1024, 10, true},
    {"fc2 input grad  d2·W2^T", false, true, 256, 1024, 1024, true},
    {"fc3 weight grad h2^T·d3", true, false, 1024, 10, 256, true},
    {"fc2 weight grad h1^T·d2", true, false, 1024, 1024, 256, true},
    {"fc1 weight grad x^T·d1", true, false, 784, 1024, 256, true},
    {"square n=2048", false, false, 2048, 2048, 2048, false},
};

struct Options {
  std::string library = "openblas";
  int threads = 1;
  int samples = 7;
  double min_sample_ms = 30;
};

bool ParseOptions(int argc, char** argv, Options* options) {
  for (int i = 1; i < argc; ++i) {
    std::string argument = argv[i];
    auto value_of = [&](const char* flag) -> const char* {
      size_t length = std::strlen(flag);
      return argument.compare(0, length, flag) == 0 ? argv[i] + length : nullptr;
    };
    if (const char* v = value_of("--library=")) {
      options->library = v;
    } else if (const char* v = value_of("--threads=")) {
      options->threads = std::atoi(v);
    } else if (const char* v = value_of("--samples=")) {
      options->samples = std::atoi(v);
    } else if (const char* v = value_of("--min_sample_ms=")) {
      options->min_sample_ms = std::atof(v);
    } else {
      std::fprintf(stderr, "unknown argument %s\n", argv[i]);
      return false;
    }
  }
  return options->threads >= 1 && options->samples >= 1 &&
         (options->library == "openblas" || options->library == "onednn");
}

// c = op(a) op(b), row-major, with the chosen library.
void Gemm(const Options& options, const GemmShape& s, const float* a, const float* b, float* c) {
  const int64_t lda = s.transpose_a ? s.m : s.k;
  const int64_t ldb = s.transpose_b ? s.k : s.n;
  if (options.library == "openblas") {
    cblas_sgemm(CblasRowMajor, s.transpose_a ? CblasTrans : CblasNoTrans,
                s.transpose_b ? CblasTrans : CblasNoTrans, s.m, s.n, s.k, 1.0f, a, lda, b, ldb,
                0.0f, c, s.n);
    return;
  }
#ifdef SOFTWIRE_HAVE_DNNL
  dnnl_sgemm(s.transpose_a ? 'T' : 'N', s.transpose_b ? 'T' : 'N', s.m, s.n, s.k, 1.0f, a, lda, b,
             ldb, 0.0f, c, s.n);
#endif
}

double Seconds(std::chrono::steady_clock::time_point begin) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
}

// Median GFLOP/s over the samples.
double MeasureGflops(const Options& options, const GemmShape& s) {
  std::vector<float> a(s.m * s.k), b(s.k * s.n), c(s.m * s.n);
  for (size_t i = 0; i < a.size(); ++i) a[i] = 0.001f * static_cast<float>(i % 997);
  for (size_t i = 0; i < b.size(); ++i) b[i] = 0.002f * static_cast<float>(i % 991);
  const double flops = 2.0 * s.m * s.n * s.k;
  // Warm up (thread pools, packing buffers) and find how many calls fill a sample.
  int64_t calls = 1;
  for (;;) {
    auto begin = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < calls; ++i) Gemm(options, s, a.data(), b.data(), c.data());
    if (Seconds(begin) * 1e3 >= options.min_sample_ms) break;
    calls *= 2;
  }
  std::vector<double> rates;
  for (int sample = 0; sample < options.samples; ++sample) {
    auto begin = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < calls; ++i) Gemm(options, s, a.data(), b.data(), c.data());
    rates.push_back(flops * calls / Seconds(begin) / 1e9);
  }
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!ParseOptions(argc, argv, &options)) {
    std::fprintf(stderr,
                 "usage: blas_bench --library=openblas|onednn --threads=N [--samples=N] "
                 "[--min_sample_ms=MS]\n");
    return 2;
  }
  if (options.library == "openblas") {
    openblas_set_num_threads(options.threads);
    std::printf("# OpenBLAS %s, core %s, %d threads\n", openblas_get_config(),
                openblas_get_corename(), openblas_get_num_threads());
  } else {
#ifdef SOFTWIRE_HAVE_DNNL
    omp_set_num_threads(options.threads);
    const dnnl_version_t* version = dnnl_version();
    std::printf("# oneDNN %d.%d.%d (%s), %d OpenMP threads\n", version->major, version->minor,
                version->patch, version->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP" : "other",
                omp_get_max_threads());
    openblas_set_num_threads(1);  // Keep OpenBLAS's pool idle.
#else
    std::fprintf(stderr, "built without oneDNN\n");
    return 2;
#endif
  }
  double step_seconds = 0;
  for (const GemmShape& shape : kShapes) {
    const double gflops = MeasureGflops(options, shape);
    if (shape.in_mlp_step) step_seconds += 2.0 * shape.m * shape.n * shape.k / (gflops * 1e9);
    std::printf("%-26s %c%c %5lld %5lld %5lld %8.1f GFLOP/s\n", shape.name,
                shape.transpose_a ? 'T' : 'N', shape.transpose_b ? 'T' : 'N',
                static_cast<long long>(shape.m), static_cast<long long>(shape.n),
                static_cast<long long>(shape.k), gflops);
  }
  std::printf("%-26s %8.3f ms\n", "MLP step products", step_seconds * 1e3);
  return 0;
}
