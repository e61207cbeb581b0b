// The text of a small training job (a `proto::Job` in text format, as a job file holds it) for
// tests that need a job to submit or run and do not care about its model: synthetic data, one
// matmul [features, classes], softmax cross-entropy, the mean loss, sgd at 0.1.
//
//   ClassifierJob wide;
//   wide.name = "wide";
//   wide.features = 256;
//   wide.classes = 1536;
//   submission.set_job_text(ClassifierJobText(wide));
//
// ClassifierJobText({}) is cli_testing::kTinyJob, the job most command and service tests run.
// Pure string formatting: no parsing, no checks (a test may build a bad job on purpose).
#ifndef SOFTWIRE_PROTO_TESTING_CLASSIFIER_JOB_TEXT_H_
#define SOFTWIRE_PROTO_TESTING_CLASSIFIER_JOB_TEXT_H_

#include <cstdint>
#include <string>

namespace softwire {
namespace proto_testing {

struct ClassifierJob {
  std::string name = "tiny";
  int64_t features = 4;        // The source's sample_dims of x, the rows of the weight w.
  int64_t classes = 3;         // Labels in [0, classes), the columns of w.
  int64_t data_seed = 7;       // The synthetic source's seed.
  int64_t weight_seed = 1;     // w's normal initializer's seed.
  double weight_stddev = 0.1;  // Printed with 6 significant digits.
  int64_t steps = 4;
  int64_t micro_batch_size = 8;
  int64_t micro_batches_per_step = 2;
};

// The job file's text, fields in the order above, one block per line as a person writes it.
std::string ClassifierJobText(const ClassifierJob& job);

}  // namespace proto_testing
}  // namespace softwire

#endif  // SOFTWIRE_PROTO_TESTING_CLASSIFIER_JOB_TEXT_H_
