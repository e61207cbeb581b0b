// sgd_update and adam_update: update actors' kernels. Inputs are (gradient, weight); the weight
// (the variable's register, of which the update actor is the phase-1 consumer) is updated in
// place. The optimizer state lives in KernelContext::state (ActorDef.state_bytes, kept across
// firings, zero before the first step): sgd's velocity, or adam's m then v. Step t = firing + 1.
//
// A third input `copy` (bfloat16, the weight's shape; the compiler's fold_weight_casts,
// docs/PRECISION.md): the variable's bfloat16 copy that the next step's products read, of which
// the update is also the phase-1 consumer. Each updated weight element is rounded into it in
// the same pass (base/bfloat16.h ToBFloat16, the rounding of the cast it replaces), so the
// copy costs 2 bytes written per element instead of a cast's pass over the weight.
//
// Parallelism: flat chunks; one pass reads gradient, weight and state and writes weight and
// state, so the kernels run at memory bandwidth. Vectorisation: plain loops (sqrt and division
// vectorise).
#include <algorithm>
#include <cmath>
#include <memory>

#include "base/bfloat16.h"
#include "proto/kernel_attributes.h"
#include "runtime/kernels/cpu/bf16_arrays.h"
#include "runtime/kernels/cpu/kernel_families.h"
#include "runtime/kernels/cpu/kernel_signature.h"
#include "runtime/kernels/cpu/parallel_for.h"

namespace softwire {
namespace runtime {
namespace {

// Updates with a bfloat16 copy run in blocks this long (16 KiB of weights, in L1 as they are
// rounded): the update's own loop, then the rounding's.
constexpr int64_t kCopyBlock = 4096;

// Rounds `count` updated weights into their bfloat16 copy, in a loop of its own
// (bf16_arrays.h): rounding inside the update's loop kept that loop scalar, and the MLP bench
// job's bf16 step took 12.1 ms against 10.6 ms with the casts left to cast actors (2026-11-28).
void RoundIntoCopy(const float* weight, BFloat16* copy, int64_t count) {
  ConvertToBFloat16(weight, copy, count);
}

// Checks (gradient, weight) of one shape, or (gradient, weight, copy) with a bfloat16 copy of
// that shape, no outputs, and that the actor's state holds `state_floats_per_element` floats
// per weight element. Returns the element count.
StatusOr<int64_t> CheckUpdateSignature(const KernelSetup& setup, int64_t state_floats_per_element) {
  const proto::KernelDef& def = setup.actor->kernel();
  if (def.input_size() == 3) {
    SOFTWIRE_RETURN_IF_ERROR(CheckSignature(def, {"gradient", "weight", "copy"},
                                            {DType::kFloat32, DType::kFloat32, DType::kBFloat16},
                                            {}, {}));
  } else {
    SOFTWIRE_RETURN_IF_ERROR(
        CheckSignature(def, {"gradient", "weight"}, {DType::kFloat32, DType::kFloat32}, {}, {}));
  }
  Shape weight = ShapeOf(def.input(1));
  SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "input gradient", ShapeOf(def.input(0)), weight));
  if (def.input_size() == 3) {
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "input copy", ShapeOf(def.input(2)), weight));
  }
  const int64_t state_bytes =
      weight.NumElements() * state_floats_per_element * static_cast<int64_t>(sizeof(float));
  if (setup.actor->state_bytes() < state_bytes) {
    return KernelDefError(def, "the actor's state_bytes " +
                                   std::to_string(setup.actor->state_bytes()) + " is below the " +
                                   std::to_string(state_bytes) + " the optimizer needs for " +
                                   weight.ToString());
  }
  return weight.NumElements();
}

class SgdUpdateKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    KernelAttributes attributes(setup.actor->kernel());
    Settings settings;
    settings.learning_rate = static_cast<float>(attributes.RequiredFloat("learning_rate"));
    settings.momentum = static_cast<float>(attributes.Float("momentum", 0.0));
    settings.weight_decay = static_cast<float>(attributes.Float("weight_decay", 0.0));
    settings.gradient_scale = static_cast<float>(attributes.Float("gradient_scale", 1.0));
    SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
    SOFTWIRE_ASSIGN_OR_RETURN(int64_t elements, CheckUpdateSignature(setup, 1));
    return std::unique_ptr<Kernel>(new SgdUpdateKernel(settings, elements));
  }

  Status Run(const KernelContext& context) override {
    const float* gradient = context.inputs[0].As<float>();
    float* weight = context.inputs[1].As<float>();
    float* velocity = static_cast<float*>(context.state);
    BFloat16* copy = context.inputs.size() > 2 ? context.inputs[2].As<BFloat16>() : nullptr;
    ParallelFor(context.parallel, elements_, MinChunkFor(4), [&](int64_t begin, int64_t end) {
      if (copy == nullptr) {
        Update(settings_, begin, end, gradient, weight, velocity);
      } else {
        UpdateWithCopy(settings_, begin, end, gradient, weight, velocity, copy);
      }
    });
    return Status::Ok();
  }

 private:
  struct Settings;

  // Plain functions of pointers and values, so that GCC sees no aliasing through a lambda's
  // captures and vectorises the loops.
  static void Update(const Settings& s, int64_t begin, int64_t end, const float* gradient,
                     float* weight, float* velocity) {
    for (int64_t i = begin; i < end; ++i) {
      const float g = s.gradient_scale * gradient[i] + s.weight_decay * weight[i];
      velocity[i] = s.momentum * velocity[i] + g;
      weight[i] -= s.learning_rate * velocity[i];
    }
  }
  static void UpdateWithCopy(const Settings& s, int64_t begin, int64_t end, const float* gradient,
                             float* weight, float* velocity, BFloat16* copy) {
    for (int64_t block = begin; block < end; block += kCopyBlock) {
      const int64_t block_end = std::min(end, block + kCopyBlock);
      Update(s, block, block_end, gradient, weight, velocity);
      RoundIntoCopy(weight + block, copy + block, block_end - block);
    }
  }

  struct Settings {
    float learning_rate = 0;
    float momentum = 0;
    float weight_decay = 0;
    float gradient_scale = 1;
  };

  SgdUpdateKernel(Settings settings, int64_t elements) : settings_(settings), elements_(elements) {}

  const Settings settings_;
  const int64_t elements_;
};

class AdamUpdateKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    KernelAttributes attributes(setup.actor->kernel());
    Settings settings;
    settings.learning_rate = attributes.RequiredFloat("learning_rate");
    settings.beta1 = attributes.Float("beta1", 0.9);
    settings.beta2 = attributes.Float("beta2", 0.999);
    settings.epsilon = attributes.Float("epsilon", 1e-8);
    settings.weight_decay = attributes.Float("weight_decay", 0.0);
    settings.gradient_scale = attributes.Float("gradient_scale", 1.0);
    SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
    SOFTWIRE_ASSIGN_OR_RETURN(int64_t elements, CheckUpdateSignature(setup, 2));
    return std::unique_ptr<Kernel>(new AdamUpdateKernel(settings, elements));
  }

  Status Run(const KernelContext& context) override {
    const float* gradient = context.inputs[0].As<float>();
    float* weight = context.inputs[1].As<float>();
    float* m = static_cast<float*>(context.state);
    float* v = m + elements_;
    BFloat16* copy = context.inputs.size() > 2 ? context.inputs[2].As<BFloat16>() : nullptr;
    const StepConstants constants = ConstantsForStep(context.firing + 1);
    ParallelFor(context.parallel, elements_, MinChunkFor(12), [&](int64_t begin, int64_t end) {
      if (copy == nullptr) {
        Update(constants, begin, end, gradient, weight, m, v);
      } else {
        UpdateWithCopy(constants, begin, end, gradient, weight, m, v, copy);
      }
    });
    return Status::Ok();
  }

 private:
  // The float32 factors of one step.
  struct StepConstants {
    float learning_rate;
    float beta1;
    float beta2;
    float one_minus_beta1;
    float one_minus_beta2;
    float inverse_correction1;  // 1 / (1 - beta1^t).
    float inverse_correction2;  // 1 / (1 - beta2^t).
    float epsilon;
    float weight_decay;
    float gradient_scale;
  };

  StepConstants ConstantsForStep(int64_t step) const {
    StepConstants constants;
    constants.learning_rate = static_cast<float>(settings_.learning_rate);
    constants.beta1 = static_cast<float>(settings_.beta1);
    constants.beta2 = static_cast<float>(settings_.beta2);
    constants.one_minus_beta1 = static_cast<float>(1.0 - settings_.beta1);
    constants.one_minus_beta2 = static_cast<float>(1.0 - settings_.beta2);
    // In double: 1 - beta2^t keeps its digits when beta2^t is close to 1.
    const double t = static_cast<double>(step);
    constants.inverse_correction1 = static_cast<float>(1.0 / (1.0 - std::pow(settings_.beta1, t)));
    constants.inverse_correction2 = static_cast<float>(1.0 / (1.0 - std::pow(settings_.beta2, t)));
    constants.epsilon = static_cast<float>(settings_.epsilon);
    constants.weight_decay = static_cast<float>(settings_.weight_decay);
    constants.gradient_scale = static_cast<float>(settings_.gradient_scale);
    return constants;
  }

  // A plain function of pointers and values, so that GCC sees no aliasing through a lambda's
  // captures and vectorises the loop.
  static void Update(const StepConstants& c, int64_t begin, int64_t end, const float* gradient,
                     float* weight, float* m, float* v) {
    for (int64_t i = begin; i < end; ++i) {
      const float g = c.gradient_scale * gradient[i];
      const float m_i = c.beta1 * m[i] + c.one_minus_beta1 * g;
      const float v_i = c.beta2 * v[i] + c.one_minus_beta2 * (g * g);
      m[i] = m_i;
      v[i] = v_i;
      const float update =
          (m_i * c.inverse_correction1) / (std::sqrt(v_i * c.inverse_correction2) + c.epsilon);
      weight[i] -= c.learning_rate * (update + c.weight_decay * weight[i]);
    }
  }
  // The same, and the updated elements rounded into the bfloat16 copy, block by block.
  static void UpdateWithCopy(const StepConstants& c, int64_t begin, int64_t end,
                             const float* gradient, float* weight, float* m, float* v,
                             BFloat16* copy) {
    for (int64_t block = begin; block < end; block += kCopyBlock) {
      const int64_t block_end = std::min(end, block + kCopyBlock);
      Update(c, block, block_end, gradient, weight, m, v);
      RoundIntoCopy(weight + block, copy + block, block_end - block);
    }
  }

  struct Settings {
    double learning_rate = 0;
    double beta1 = 0.9;
    double beta2 = 0.999;
    double epsilon = 1e-8;
    double weight_decay = 0;
    double gradient_scale = 1;
  };

  AdamUpdateKernel(Settings settings, int64_t elements)
      : settings_(settings), elements_(elements) {}

  const Settings settings_;
  const int64_t elements_;
};

}  // namespace

void RegisterOptimizerKernels(KernelRegistry* registry) {
  registry->Register("sgd_update", SgdUpdateKernel::Create);
  registry->Register("adam_update", AdamUpdateKernel::Create);
}

}  // namespace runtime
}  // namespace softwire
