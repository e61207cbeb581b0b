#include "proto/testing/classifier_job_text.h"

#include <sstream>

namespace softwire {
namespace proto_testing {

std::string ClassifierJobText(const ClassifierJob& job) {
  std::ostringstream text;
  text << "name: \"" << job.name << "\"\n"
       << "source {\n"
       << "  name: \"data\"\n"
       << "  output { name: \"x\" dtype: DATA_TYPE_FLOAT32 sample_dims: " << job.features << " }\n"
       << "  output { name: \"labels\" dtype: DATA_TYPE_INT32 }\n"
       << "  synthetic { seed: " << job.data_seed << " int_high: " << job.classes << " }\n"
       << "}\n"
       << "variable {\n"
       << "  name: \"w\"\n"
       << "  dtype: DATA_TYPE_FLOAT32\n"
       << "  dims: [" << job.features << ", " << job.classes << "]\n"
       << "  initializer { normal { stddev: " << job.weight_stddev << " seed: " << job.weight_seed
       << " } }\n"
       << "}\n"
       << "op { name: \"fc\" type: \"matmul\" input: [\"x\", \"w\"] output: \"logits\" }\n"
       << "op { name: \"xent\" type: \"softmax_cross_entropy\" input: [\"logits\", \"labels\"] "
          "output: \"losses\" }\n"
       << "op { name: \"mean\" type: \"reduce_mean\" input: \"losses\" output: \"loss\" }\n"
       << "train {\n"
       << "  loss: \"loss\"\n"
       << "  optimizer { sgd { learning_rate: 0.1 } }\n"
       << "  steps: " << job.steps << "\n"
       << "  micro_batch_size: " << job.micro_batch_size << "\n"
       << "  micro_batches_per_step: " << job.micro_batches_per_step << "\n"
       << "}\n";
  return text.str();
}

}  // namespace proto_testing
}  // namespace softwire
