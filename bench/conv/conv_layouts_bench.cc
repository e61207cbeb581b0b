// oneDNN 2.6's convolutions on ResNet-20's shapes with the image operands held in NCHW, NHWC,
// nChw16c or `any` (oneDNN's choice, what a plain operand gets inside the kernel after a
// reorder), forward and both gradients, float32 and bf16, one thread, one lane of images: the
// measured kernel times behind choose_layouts' LayoutFactor (docs/LAYOUTS.md). Prints one line
// per shape, layout and type with milliseconds per pass and the implementation oneDNN picked;
// then the reorders NCHW <-> NHWC and nChw16c of ResNet-20's activations at batch 64.
//
//   build/bench/conv/conv_layouts_bench [--lane 16]
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

using dnnl::memory;
using Tag = memory::format_tag;
using Type = memory::data_type;

struct ConvShape {
  const char* name;
  int in_channels, out_channels, size, kernel, stride, count;  // count: how many in ResNet-20.
};

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Milliseconds per call, after one warm-up call, over at least 0.15 s.
template <typename F>
double Milliseconds(const F& f) {
  f();
  int repeats = 0;
  const double start = Now();
  double now = start;
  do {
    f();
    ++repeats;
    now = Now();
  } while (now - start < 0.15);
  return (now - start) / repeats * 1e3;
}

void Zero(std::unordered_map<int, memory>& arguments) {
  for (auto& [key, value] : arguments) {
    std::memset(value.get_data_handle(), 0, value.get_desc().get_size());
  }
}

}  // namespace

int main(int argc, char** argv) {
  int lane = 16;
  if (argc == 3 && std::string(argv[1]) == "--lane") lane = std::atoi(argv[2]);
  omp_set_num_threads(1);
  const std::vector<ConvShape> shapes = {
      {"stem 3->16 32x32", 3, 16, 32, 3, 1, 1}, {"16->16 32x32", 16, 16, 32, 3, 1, 6},
      {"16->32 s2 3x3", 16, 32, 32, 3, 2, 1},   {"16->32 s2 1x1", 16, 32, 32, 1, 2, 1},
      {"32->32 16x16", 32, 32, 16, 3, 1, 5},    {"32->64 s2 3x3", 32, 64, 16, 3, 2, 1},
      {"32->64 s2 1x1", 32, 64, 16, 1, 2, 1},   {"64->64 8x8", 64, 64, 8, 3, 1, 5}};
  const std::vector<std::pair<const char*, Tag>> layouts = {
      {"nchw", Tag::nchw}, {"nhwc", Tag::nhwc}, {"nChw16c", Tag::nChw16c}, {"any", Tag::any}};
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  for (Type type : {Type::f32, Type::bf16}) {
    const char* type_name = type == Type::f32 ? "f32" : "bf16";
    for (const auto& [layout_name, tag] : layouts) {
      double network = 0;  // Sum over ResNet-20's convolutions, three passes.
      for (const ConvShape& s : shapes) {
        const int out = (s.size + 2 * (s.kernel / 2) - s.kernel) / s.stride + 1;
        const memory::dims x = {lane, s.in_channels, s.size, s.size};
        const memory::dims w = {s.out_channels, s.in_channels, s.kernel, s.kernel};
        const memory::dims y = {lane, s.out_channels, out, out};
        const memory::dims strides = {s.stride, s.stride}, dilation = {0, 0};
        const memory::dims padding = {s.kernel / 2, s.kernel / 2};
        const memory::desc weights(w, type, Tag::any);
        // An input nChw16c does not fit (3 channels) stays plain, as choose_layouts keeps it,
        // and the kernel describes it as `any`.
        const Tag x_tag = tag == Tag::nChw16c && s.in_channels % 16 != 0 ? Tag::any : tag;
        try {
          dnnl::convolution_forward::primitive_desc forward(
              dnnl::convolution_forward::desc(
                  dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
                  memory::desc(x, type, x_tag), weights, memory::desc(y, Type::f32, tag), strides,
                  dilation, padding, padding),
              engine);
          dnnl::convolution_backward_data::primitive_desc data(
              dnnl::convolution_backward_data::desc(
                  dnnl::algorithm::convolution_direct, memory::desc(x, Type::f32, x_tag), weights,
                  memory::desc(y, type, tag), strides, dilation, padding, padding),
              engine, forward);
          dnnl::convolution_backward_weights::primitive_desc filter(
              dnnl::convolution_backward_weights::desc(
                  dnnl::algorithm::convolution_direct, memory::desc(x, type, x_tag),
                  memory::desc(w, Type::f32, Tag::any), memory::desc(y, type, tag), strides,
                  dilation, padding, padding),
              engine, forward);
          std::vector<dnnl::primitive> primitives = {dnnl::convolution_forward(forward),
                                                     dnnl::convolution_backward_data(data),
                                                     dnnl::convolution_backward_weights(filter)};
          std::vector<std::unordered_map<int, memory>> arguments = {
              {{DNNL_ARG_SRC, memory(forward.src_desc(), engine)},
               {DNNL_ARG_WEIGHTS, memory(forward.weights_desc(), engine)},
               {DNNL_ARG_DST, memory(forward.dst_desc(), engine)}},
              {{DNNL_ARG_DIFF_DST, memory(data.diff_dst_desc(), engine)},
               {DNNL_ARG_WEIGHTS, memory(data.weights_desc(), engine)},
               {DNNL_ARG_DIFF_SRC, memory(data.diff_src_desc(), engine)}},
              {{DNNL_ARG_DIFF_DST, memory(filter.diff_dst_desc(), engine)},
               {DNNL_ARG_SRC, memory(filter.src_desc(), engine)},
               {DNNL_ARG_DIFF_WEIGHTS, memory(filter.diff_weights_desc(), engine)}}};
          const std::string names[3] = {forward.impl_info_str(), data.impl_info_str(),
                                        filter.impl_info_str()};
          double ms[3] = {0, 0, 0};
          for (int pass = 0; pass < 3; ++pass) {
            if (pass == 1 && s.in_channels == 3) continue;  // The input needs no gradient.
            Zero(arguments[pass]);
            ms[pass] = Milliseconds([&] {
              primitives[pass].execute(stream, arguments[pass]);
              stream.wait();
            });
            network += ms[pass] * s.count;
          }
          std::printf("%-4s %-7s %-17s forward %7.3f (%s)  data %7.3f (%s)  filter %7.3f (%s)\n",
                      type_name, layout_name, s.name, ms[0], names[0].c_str(), ms[1],
                      names[1].c_str(), ms[2], names[2].c_str());
        } catch (const dnnl::error& error) {
          std::printf("%-4s %-7s %-17s rejected: %s\n", type_name, layout_name, s.name,
                      error.what());
        }
        std::fflush(stdout);
      }
      std::printf("%-4s %-7s ResNet-20's convolutions, one lane of %d: %.2f ms\n", type_name,
                  layout_name, lane, network);
    }
  }
  for (Type type : {Type::f32, Type::bf16}) {
    for (int channels : {16, 32, 64}) {
      const int size = 512 / channels;
      const memory::dims dims = {64, channels, size, size};
      for (Tag tag : {Tag::nhwc, Tag::nChw16c}) {
        memory plain(memory::desc(dims, type, Tag::nchw), engine);
        memory other(memory::desc(dims, type, tag), engine);
        std::memset(plain.get_data_handle(), 0, plain.get_desc().get_size());
        dnnl::reorder in(plain, other), back(other, plain);
        const double to = Milliseconds([&] {
          in.execute(stream, plain, other);
          stream.wait();
        });
        const double from = Milliseconds([&] {
          back.execute(stream, other, plain);
          stream.wait();
        });
        std::printf("%-4s reorder [64, %d, %d, %d] nchw -> %s %.3f ms, back %.3f ms\n",
                    type == Type::f32 ? "f32" : "bf16", channels, size, size,
                    tag == Tag::nhwc ? "nhwc" : "nChw16c", to, from);
      }
    }
  }
  return 0;
}
