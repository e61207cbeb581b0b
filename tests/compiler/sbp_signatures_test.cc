// Every sbp signature an op offers computes the right values: for each op instance below and
// each of its 1D signatures on two devices, the op's reference kernel (reference/kernels) runs
// on each device's part (slices for S, the whole for B, random terms summing to the value for
// P) with the attributes localize() rewrites, and the parts must reassemble into the logical
// result (concatenated for S, equal for B, summed for P). Physical attributes the reference
// kernels do not read yet (docs/OPS.md "Physical attributes") are applied around them here.
// Plus the signature lists docs/PARALLELISM.md spells out.
#include "compiler/ops/sbp_signatures.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "compiler/ops/attribute_schema.h"
#include "compiler/ops/op_registry.h"
#include "compiler/testing/compiler_test_util.h"
#include "reference/kernels/testing/reference_kernel_runner.h"

namespace softwire {
namespace compiler {
namespace {

using placement::Sbp;
using reference::ReferenceTensor;

// One op instance: its type, input types, attributes, and for int32 inputs the exclusive bound
// of their values.
struct OpCase {
  std::string type;
  std::vector<TensorType> inputs;
  AttributeMap attributes;
  std::vector<int64_t> int_bounds;  // Per input; 0 for float inputs.
};

AttributeMap Attrs(std::vector<std::pair<std::string, AttributeValue>> entries) {
  AttributeMap map;
  for (auto& [name, value] : entries) map.Set(name, value);
  return map;
}

// batch_norm split on the batch normalises each device's part over itself, by design (as
// PyTorch's DDP; docs/OPS.md): not the logical op, so not checked against it here.
bool NormalisesPerDevice(const std::string& type, const SbpSignature& signature) {
  return (type == "batch_norm" || type == "batch_norm_grad") &&
         signature.inputs[0] == placement::Sbp::Split(0);
}

std::vector<OpCase> Cases() {
  using V = std::vector<int64_t>;
  return {
      {"matmul", {F32({4, 6}), F32({6, 8})}, {}, {}},
      {"matmul",
       {F32({6, 4}), F32({8, 6})},
       Attrs({{"transpose_a", true}, {"transpose_b", true}}),
       {}},
      {"matmul", {F32({2, 4, 6}), F32({6, 8})}, {}, {}},
      {"batch_matmul", {F32({2, 4, 4, 6}), F32({2, 4, 6, 2})}, {}, {}},
      {"batch_matmul", {F32({2, 4, 6}), F32({2, 8, 6})}, Attrs({{"transpose_b", true}}), {}},
      {"add", {F32({4, 6}), F32({4, 6})}, {}, {}},
      {"add", {F32({2, 4, 6}), F32({4, 6})}, {}, {}},
      {"sub", {F32({4, 6}), F32({1, 6})}, {}, {}},
      {"mul", {F32({4, 6}), F32({4, 6})}, {}, {}},
      {"scale", {F32({4, 6})}, Attrs({{"factor", 0.5}}), {}},
      {"bias_add", {F32({4, 6}), F32({6})}, {}, {}},
      {"bias_add_grad", {F32({2, 4, 6})}, {}, {}},
      {"identity", {F32({4, 6})}, {}, {}},
      {"cast", {F32({4, 6})}, Attrs({{"dtype", std::string("bfloat16")}}), {}},
      {"reorder", {F32({4, 2, 5, 6})}, Attrs({{"layout", std::string("nhwc")}}), {}},
      {"matmul",
       {TensorType{DType::kBFloat16, Shape({4, 6})}, TensorType{DType::kBFloat16, Shape({6, 8})}},
       {},
       {}},
      {"relu", {F32({4, 6})}, {}, {}},
      {"gelu", {F32({4, 6})}, {}, {}},
      {"relu_grad", {F32({4, 6}), F32({4, 6})}, {}, {}},
      {"gelu_grad", {F32({4, 6}), F32({4, 6})}, {}, {}},
      {"softmax", {F32({2, 4, 6})}, {}, {}},
      {"softmax", {F32({2, 2, 4, 4})}, Attrs({{"causal", true}}), {}},
      {"softmax_grad", {F32({4, 6}), F32({4, 6})}, {}, {}},
      {"layer_norm", {F32({2, 4, 6}), F32({6}), F32({6})}, {}, {}},
      {"layer_norm_grad", {F32({4, 6}), F32({4, 6}), F32({6})}, {}, {}},
      {"conv2d", {F32({4, 2, 5, 6}), F32({4, 2, 3, 3})}, Attrs({{"padding", V{1, 1}}}), {}},
      {"conv2d",
       {F32({4, 4, 5, 6}), F32({6, 2, 3, 2}), F32({6})},
       Attrs({{"strides", V{2, 1}}, {"groups", int64_t{2}}}),
       {}},
      {"conv2d", {F32({2, 2, 5, 6}), F32({4, 2, 2, 2}), F32({4})}, {}, {}},
      {"conv2d_grad_input",
       {F32({4, 4, 5, 6}), F32({4, 2, 3, 3})},
       Attrs({{"padding", V{1, 1}}, {"shape", V{4, 2, 5, 6}}}),
       {}},
      {"conv2d_grad_filter",
       {F32({4, 4, 5, 6}), F32({4, 2, 5, 6})},
       Attrs({{"padding", V{1, 1}}, {"shape", V{4, 2, 3, 3}}}),
       {}},
      {"batch_norm", {F32({4, 2, 3, 3}), F32({2}), F32({2})}, {}, {}},
      {"batch_norm_grad", {F32({4, 2, 3, 3}), F32({4, 2, 3, 3}), F32({2})}, {}, {}},
      {"batch_norm",
       {F32({4, 2, 3, 3}), F32({2}), F32({2}), F32({2}), F32({2})},
       Attrs({{"use_running_statistics", true}}),
       {}},
      {"batch_norm_statistics", {F32({4, 2, 3, 3})}, {}, {}},
      {"max_pool2d", {F32({2, 4, 5, 6})}, Attrs({{"kernel", V{2, 2}}}), {}},
      {"max_pool2d_grad", {F32({2, 4, 2, 3}), F32({2, 4, 5, 6})}, Attrs({{"kernel", V{2, 2}}}), {}},
      {"avg_pool2d",
       {F32({2, 4, 5, 6})},
       Attrs({{"kernel", V{3, 3}}, {"strides", V{2, 2}}, {"padding", V{1, 1}}}),
       {}},
      {"avg_pool2d_grad",
       {F32({2, 4, 3, 3})},
       Attrs({{"kernel", V{3, 3}},
              {"strides", V{2, 2}},
              {"padding", V{1, 1}},
              {"shape", V{2, 4, 5, 6}}}),
       {}},
      {"global_avg_pool", {F32({2, 4, 3, 5})}, {}, {}},
      {"global_avg_pool_grad", {F32({2, 4})}, Attrs({{"shape", V{2, 4, 3, 5}}}), {}},
      {"flatten", {F32({4, 2, 3, 2})}, {}, {}},
      {"reduce_sum", {F32({4, 6})}, Attrs({{"axes", V{1}}}), {}},
      {"reduce_sum", {F32({2, 4, 6})}, Attrs({{"axes", V{0, 2}}, {"keepdims", true}}), {}},
      {"reduce_mean", {F32({4, 6})}, {}, {}},
      {"reduce_mean", {F32({4, 6, 2})}, Attrs({{"axes", V{1}}}), {}},
      {"reshape", {F32({4, 6})}, Attrs({{"shape", V{2, 2, 6}}}), {}},
      {"reshape", {F32({2, 4, 6})}, Attrs({{"shape", V{-1, 6}}}), {}},
      {"reshape", {F32({4, 2, 6})}, Attrs({{"shape", V{4, 12}}}), {}},
      {"transpose", {F32({2, 4, 6})}, Attrs({{"perm", V{2, 0, 1}}}), {}},
      {"embedding", {F32({8, 6}), I32({4, 2})}, {}, {0, 8}},
      {"embedding_grad",
       {F32({4, 2, 6}), I32({4, 2})},
       Attrs({{"num_embeddings", int64_t{8}}}),
       {0, 8}},
      {"softmax_cross_entropy", {F32({4, 2, 6}), I32({4, 2})}, {}, {0, 6}},
      {"softmax_cross_entropy_grad", {F32({4}), F32({4, 6}), I32({4})}, {}, {0, 0, 6}},
      {"accuracy", {F32({4, 6}), I32({4})}, {}, {0, 6}},
      {"add_n", {F32({4, 6}), F32({4, 6}), F32({4, 6})}, {}, {}},
      {"sum_to_shape", {F32({2, 4, 6})}, Attrs({{"shape", V{1, 6}}}), {}},
      {"broadcast_axes", {F32({6})}, Attrs({{"shape", V{4, 6}}, {"axes", V{0}}}), {}},
      {"broadcast_axes", {F32({4, 1})}, Attrs({{"shape", V{4, 6}}, {"axes", V{1}}}), {}},
  };
}

// Row-major helpers.
int64_t Offset(const std::vector<int64_t>& dims, const std::vector<int64_t>& index) {
  int64_t offset = 0;
  for (size_t axis = 0; axis < dims.size(); ++axis) offset = offset * dims[axis] + index[axis];
  return offset;
}

bool Next(const std::vector<int64_t>& dims, std::vector<int64_t>* index) {
  for (int axis = static_cast<int>(dims.size()) - 1; axis >= 0; --axis) {
    if (++(*index)[axis] < dims[axis]) return true;
    (*index)[axis] = 0;
  }
  return false;
}

// The part `part` of 2 that `sbp` gives of `tensor`.
ReferenceTensor PartOf(const ReferenceTensor& tensor, const Sbp& sbp, int part) {
  if (!sbp.is_split()) return tensor;
  const std::vector<int64_t>& dims = tensor.shape.dims();
  std::vector<int64_t> local = dims;
  local[sbp.axis] /= 2;
  ReferenceTensor slice{tensor.dtype, Shape(local), {}};
  std::vector<int64_t> index(local.size(), 0);
  do {
    std::vector<int64_t> at = index;
    at[sbp.axis] += part * local[sbp.axis];
    slice.values.push_back(tensor.values[Offset(dims, at)]);
  } while (Next(local, &index));
  return slice;
}

// Concatenation of two parts along `axis`.
ReferenceTensor Concat(const ReferenceTensor& a, const ReferenceTensor& b, int axis) {
  std::vector<int64_t> dims = a.shape.dims();
  dims[axis] *= 2;
  ReferenceTensor joined{a.dtype, Shape(dims), std::vector<double>(Shape(dims).NumElements())};
  for (int part = 0; part < 2; ++part) {
    const ReferenceTensor& source = part == 0 ? a : b;
    const std::vector<int64_t>& local = source.shape.dims();
    std::vector<int64_t> index(local.size(), 0);
    size_t flat = 0;
    do {
      std::vector<int64_t> at = index;
      at[axis] += part * local[axis];
      joined.values[Offset(dims, at)] = source.values[flat++];
    } while (Next(local, &index));
  }
  return joined;
}

std::vector<proto::Attribute> ToProto(const AttributeMap& attributes,
                                      const std::set<std::string>& skip) {
  std::vector<proto::Attribute> list;
  for (const auto& [name, value] : attributes.entries()) {
    if (skip.count(name) == 0) list.push_back(AttributeToProto(name, value));
  }
  return list;
}

class SbpHarness {
 public:
  SbpHarness() : registry_(MakeStandardOps()), kernels_(reference::MakeReferenceKernels()) {}

  // The op on whole values.
  std::vector<ReferenceTensor> RunWhole(const OpCase& op, const std::vector<TensorType>& outputs,
                                        const AttributeMap& attributes,
                                        const std::vector<ReferenceTensor>& inputs) {
    return Run(op.type, attributes, inputs, outputs);
  }

  std::vector<ReferenceTensor> Run(const std::string& type, const AttributeMap& attributes,
                                   const std::vector<ReferenceTensor>& inputs,
                                   const std::vector<TensorType>& outputs) {
    std::vector<Shape> shapes;
    for (const TensorType& output : outputs) shapes.push_back(output.shape);
    // Physical attributes the reference kernels do not read are applied around them.
    const std::set<std::string> physical = {"divisor", "index_begin", "partial"};
    if (type == "embedding" && attributes.Contains("index_begin")) {
      return {PartialEmbedding(attributes, inputs, shapes[0])};
    }
    if (type == "embedding_grad" && attributes.Contains("index_begin")) {
      return {PartialEmbeddingGrad(attributes, inputs, shapes[0])};
    }
    StatusOr<std::vector<ReferenceTensor>> result = reference::RunReferenceKernel(
        kernels_, type == "reduce_mean" && attributes.Contains("divisor") ? "reduce_sum" : type,
        ToProto(attributes, physical), inputs, shapes);
    if (!result.ok()) {
      ADD_FAILURE() << type << ": " << result.status();
      std::vector<ReferenceTensor> zeros;
      for (const Shape& shape : shapes) {
        zeros.push_back({DType::kFloat32, shape, std::vector<double>(shape.NumElements(), 0)});
      }
      return zeros;
    }
    if (attributes.Contains("divisor")) {
      const double divisor = static_cast<double>(attributes.GetInt("divisor"));
      // reduce_mean: local sum / divisor; accuracy: local fraction * local rows / divisor.
      const double factor = type == "accuracy"
                                ? static_cast<double>(inputs[1].shape.NumElements()) / divisor
                                : 1.0 / divisor;
      for (double& value : (*result)[0].values) value *= factor;
    }
    return *result;
  }

  // y[r] = table[ids[r] - index_begin] when it is in the local rows, else zeros.
  static ReferenceTensor PartialEmbedding(const AttributeMap& attributes,
                                          const std::vector<ReferenceTensor>& inputs,
                                          const Shape& shape) {
    const int64_t begin = attributes.GetInt("index_begin");
    const int64_t rows = inputs[0].shape.dim(0);
    const int64_t width = inputs[0].shape.dim(1);
    ReferenceTensor y{DType::kFloat32, shape, std::vector<double>(shape.NumElements(), 0)};
    for (size_t r = 0; r < inputs[1].values.size(); ++r) {
      const int64_t row = static_cast<int64_t>(inputs[1].values[r]) - begin;
      if (row < 0 || row >= rows) continue;
      for (int64_t c = 0; c < width; ++c)
        y.values[r * width + c] = inputs[0].values[row * width + c];
    }
    return y;
  }

  static ReferenceTensor PartialEmbeddingGrad(const AttributeMap& attributes,
                                              const std::vector<ReferenceTensor>& inputs,
                                              const Shape& shape) {
    const int64_t begin = attributes.GetInt("index_begin");
    const int64_t rows = shape.dim(0);
    const int64_t width = shape.dim(1);
    ReferenceTensor table{DType::kFloat32, shape, std::vector<double>(shape.NumElements(), 0)};
    for (size_t r = 0; r < inputs[1].values.size(); ++r) {
      const int64_t row = static_cast<int64_t>(inputs[1].values[r]) - begin;
      if (row < 0 || row >= rows) continue;
      for (int64_t c = 0; c < width; ++c)
        table.values[row * width + c] += inputs[0].values[r * width + c];
    }
    return table;
  }

  // Checks one signature; returns false (and records why) when its splits are uneven.
  bool Check(const OpCase& op, const SbpSignature& signature,
             const std::vector<TensorType>& outputs, const AttributeMap& attributes,
             const std::vector<ReferenceTensor>& inputs,
             const std::vector<ReferenceTensor>& expected) {
    const OpDefinition& definition = *registry_.Find(op.type);
    auto even = [](const TensorType& type, const Sbp& sbp) {
      return !sbp.is_split() || type.shape.dim(sbp.axis) % 2 == 0;
    };
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!even(op.inputs[i], signature.inputs[i])) return false;
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (!even(outputs[i], signature.outputs[i])) return false;
    }
    std::mt19937 random(17);
    std::uniform_real_distribution<double> uniform(-1, 1);
    std::vector<std::vector<ReferenceTensor>> parts(2);
    for (size_t i = 0; i < inputs.size(); ++i) {
      ReferenceTensor term = inputs[i];
      for (double& value : term.values) value = uniform(random);
      for (int part = 0; part < 2; ++part) {
        ReferenceTensor local = PartOf(inputs[i], signature.inputs[i], part);
        if (signature.inputs[i].is_partial()) {
          for (size_t e = 0; e < local.values.size(); ++e) {
            local.values[e] = part == 0 ? inputs[i].values[e] - term.values[e] : term.values[e];
          }
        }
        parts[part].push_back(local);
      }
    }
    std::vector<std::vector<ReferenceTensor>> results;
    for (int part = 0; part < 2; ++part) {
      std::vector<TensorType> local_inputs;
      std::vector<TensorType> local_outputs;
      std::vector<placement::TensorBox> input_boxes;
      std::vector<placement::TensorBox> output_boxes;
      auto layout = [](const Sbp& sbp) { return placement::NdSbp{sbp, Sbp::Broadcast()}; };
      for (size_t i = 0; i < inputs.size(); ++i) {
        local_inputs.push_back({op.inputs[i].dtype, parts[part][i].shape});
        input_boxes.push_back(placement::PartBox(op.inputs[i].shape.dims(),
                                                 layout(signature.inputs[i]), {2, 1}, {part, 0}));
      }
      for (size_t i = 0; i < outputs.size(); ++i) {
        local_outputs.push_back(
            {outputs[i].dtype, Shape(placement::LocalDims(outputs[i].shape.dims(),
                                                          layout(signature.outputs[i]), {2, 1}))});
        output_boxes.push_back(placement::PartBox(outputs[i].shape.dims(),
                                                  layout(signature.outputs[i]), {2, 1}, {part, 0}));
      }
      AttributeMap local_attributes = attributes;
      if (definition.localize) {
        PhysicalContext context{op.inputs,   outputs,      local_inputs,    local_outputs,
                                input_boxes, output_boxes, local_attributes};
        definition.localize(context);
      }
      results.push_back(Run(op.type, local_attributes, parts[part], local_outputs));
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      const Sbp& sbp = signature.outputs[i];
      const std::string where =
          op.type + " " + ToString(signature) + " output " + std::to_string(i);
      std::vector<ReferenceTensor> candidates;
      if (sbp.is_split()) {
        candidates.push_back(Concat(results[0][i], results[1][i], sbp.axis));
      } else if (sbp.is_partial()) {
        ReferenceTensor sum = results[0][i];
        for (size_t e = 0; e < sum.values.size(); ++e) sum.values[e] += results[1][i].values[e];
        candidates.push_back(sum);
      } else {
        candidates = {results[0][i], results[1][i]};
      }
      for (const ReferenceTensor& got : candidates) {
        EXPECT_EQ(got.shape, expected[i].shape) << where;
        if (got.shape != expected[i].shape) continue;
        for (size_t e = 0; e < got.values.size(); ++e) {
          EXPECT_NEAR(got.values[e], expected[i].values[e], 1e-9) << where << " element " << e;
        }
      }
    }
    return true;
  }

  static std::string ToString(const SbpSignature& signature) {
    std::string text = "(";
    for (size_t i = 0; i < signature.inputs.size(); ++i) {
      text += (i ? ", " : "") + signature.inputs[i].ToString();
    }
    text += ") ->";
    for (const Sbp& sbp : signature.outputs) text += " " + sbp.ToString();
    return text;
  }

  const OpRegistry& registry() const { return registry_; }

 private:
  OpRegistry registry_;
  reference::ReferenceKernelTable kernels_;
};

TEST(SbpSignatures, EverySignatureOfEveryOpReassemblesIntoTheLogicalResult) {
  SbpHarness harness;
  std::set<std::string> covered;
  int checked = 0;
  for (const OpCase& op : Cases()) {
    const OpDefinition& definition = *harness.registry().Find(op.type);
    StatusOr<AttributeMap> attributes = CompleteAttributes(definition, op.attributes);
    ASSERT_TRUE(attributes.ok()) << op.type << ": " << attributes.status();
    StatusOr<std::vector<TensorType>> outputs =
        InferOp(harness.registry(), op.type, op.inputs, *attributes);
    ASSERT_TRUE(outputs.ok()) << op.type << ": " << outputs.status();
    std::mt19937 random(5);
    std::vector<ReferenceTensor> inputs;
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      ReferenceTensor tensor{op.inputs[i].dtype, op.inputs[i].shape, {}};
      const int64_t bound = i < op.int_bounds.size() ? op.int_bounds[i] : 0;
      for (int64_t e = 0; e < op.inputs[i].NumElements(); ++e) {
        tensor.values.push_back(bound > 0 ? static_cast<double>(random() % bound)
                                          : std::uniform_real_distribution<double>(-1, 1)(random));
      }
      inputs.push_back(std::move(tensor));
    }
    std::vector<ReferenceTensor> expected = harness.RunWhole(op, *outputs, *attributes, inputs);
    const std::vector<SbpSignature> signatures =
        SbpSignaturesOf(definition, {op.inputs, *outputs, *attributes});
    EXPECT_GT(signatures.size(), 1u) << op.type << " offers only all-broadcast";
    for (const SbpSignature& signature : signatures) {
      if (NormalisesPerDevice(op.type, signature)) continue;
      if (harness.Check(op, signature, *outputs, *attributes, inputs, expected)) ++checked;
      if (::testing::Test::HasFailure()) return;
    }
    covered.insert(op.type);
  }
  EXPECT_GT(checked, 150);
  // Every op with signatures beyond all-broadcast and a reference kernel is covered.
  for (const std::string& type : harness.registry().Types()) {
    const OpDefinition& definition = *harness.registry().Find(type);
    if (!definition.sbp_signatures || definition.usage == OpUsage::kActorKind) continue;
    if (type == "copy") continue;  // A transfer; its kernel is the identity.
    EXPECT_TRUE(covered.count(type)) << type << " has sbp signatures no case checks";
  }
}

std::vector<std::string> Texts(const std::string& type, std::vector<TensorType> inputs,
                               AttributeMap attributes = {}) {
  OpRegistry registry = MakeStandardOps();
  const OpDefinition& definition = *registry.Find(type);
  AttributeMap complete = *CompleteAttributes(definition, attributes);
  std::vector<TensorType> outputs = *InferOp(registry, type, inputs, complete);
  std::vector<std::string> texts;
  for (const SbpSignature& signature : SbpSignaturesOf(definition, {inputs, outputs, complete})) {
    texts.push_back(SbpHarness::ToString(signature));
  }
  return texts;
}

using ::testing::Contains;
using ::testing::Not;

TEST(SbpSignatures, OffersMatmulsSplitsOfMNAndKAndItsLinearity) {
  std::vector<std::string> matmul = Texts("matmul", {F32({4, 6}), F32({6, 8})});
  EXPECT_EQ(matmul.front(), "(B, B) -> B");
  EXPECT_THAT(matmul, Contains("(S(0), B) -> S(0)"));
  EXPECT_THAT(matmul, Contains("(B, S(1)) -> S(1)"));
  EXPECT_THAT(matmul, Contains("(S(1), S(0)) -> P"));
  EXPECT_THAT(matmul, Contains("(P, B) -> P"));
  EXPECT_THAT(matmul, Contains("(B, P) -> P"));
}

TEST(SbpSignatures, NeverSplitsTheAxesANormalizationReadsWhole) {
  EXPECT_THAT(Texts("softmax", {F32({2, 4, 4})}), Not(Contains("(S(2)) -> S(2)")));
  std::vector<std::string> causal = Texts("softmax", {F32({2, 4, 4})}, [] {
    AttributeMap map;
    map.Set("causal", true);
    return map;
  }());
  EXPECT_THAT(causal, Contains("(S(0)) -> S(0)"));
  EXPECT_THAT(causal, Not(Contains("(S(1)) -> S(1)")));
  EXPECT_THAT(Texts("layer_norm", {F32({4, 6}), F32({6}), F32({6})}),
              Not(Contains("(S(1), S(0), S(0)) -> S(1)")));
}

TEST(SbpSignatures, TurnsASplitReducedAxisIntoPartialSums) {
  AttributeMap axes;
  axes.Set("axes", std::vector<int64_t>{0});
  std::vector<std::string> reduce = Texts("reduce_mean", {F32({4, 6})}, axes);
  EXPECT_THAT(reduce, Contains("(S(0)) -> P"));
  EXPECT_THAT(reduce, Contains("(S(1)) -> S(0)"));
  EXPECT_THAT(Texts("accuracy", {F32({4, 6}), I32({4})}), Contains("(S(0), S(0)) -> P"));
  EXPECT_THAT(Texts("embedding", {F32({8, 6}), I32({4})}), Contains("(S(0), B) -> P"));
}

TEST(SbpSignatures, MapsAReshapeSplitOnlyThroughTheOutermostAxisOfAGroup) {
  AttributeMap shape;
  shape.Set("shape", std::vector<int64_t>{2, 2, 6});
  std::vector<std::string> reshape = Texts("reshape", {F32({4, 6})}, shape);
  EXPECT_THAT(reshape, Contains("(S(0)) -> S(0)"));  // [4] -> [2, 2]: outer axes.
  EXPECT_THAT(reshape, Contains("(S(1)) -> S(2)"));  // [6] kept.
  EXPECT_THAT(reshape, Not(Contains("(S(0)) -> S(1)")));
}

}  // namespace
}  // namespace compiler
}  // namespace softwire
