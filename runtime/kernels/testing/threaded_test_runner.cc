#include "runtime/kernels/testing/threaded_test_runner.h"

#include <algorithm>
#include <thread>
#include <vector>

namespace softwire {
namespace runtime {

void ThreadedTestRunner::ParallelFor(int64_t count, int64_t min_chunk,
                                     const std::function<void(int64_t, int64_t)>& body) {
  if (count <= 0) return;
  std::vector<int64_t> bounds = {0};
  if (split_ == Split::kUneven) {
    // Quadratic cut points: ranges grow from small to large.
    const int64_t parts = std::min<int64_t>(threads_, count);
    for (int64_t k = 1; k < parts; ++k) bounds.push_back(count * k * k / (parts * parts));
  } else {
    const int64_t parts =
        std::max<int64_t>(1, std::min<int64_t>(threads_, count / std::max<int64_t>(1, min_chunk)));
    for (int64_t k = 1; k < parts; ++k) bounds.push_back(count * k / parts);
  }
  bounds.push_back(count);
  bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
  if (bounds.size() > 2) parallel_calls_.fetch_add(1);
  std::vector<std::thread> helpers;
  for (size_t part = 1; part + 1 < bounds.size(); ++part) {
    helpers.emplace_back([&body, &bounds, part] { body(bounds[part], bounds[part + 1]); });
  }
  body(bounds[0], bounds[1]);
  for (std::thread& helper : helpers) helper.join();
}

}  // namespace runtime
}  // namespace softwire
