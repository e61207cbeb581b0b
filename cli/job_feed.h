// Following a served job's event feed as `softwire submit` and `softwire watch` do: the plan's
// header, a line per step as `softwire run` prints them (or one progress bar on a terminal:
// step, loss, samples/s, time left), the final metrics. A stream that breaks is watched again
// from the event after the last one seen, for up to kReconnectSeconds, so nothing is missed and
// nothing shown twice.
//
//   FeedOptions options;
//   options.command = "submit";
//   StatusOr<FeedOutcome> outcome = FollowJob(&client, "job-3", options);
//   if (outcome.ok() && outcome->state == proto::JOB_STATE_SUCCEEDED) ...
#ifndef SOFTWIRE_CLI_JOB_FEED_H_
#define SOFTWIRE_CLI_JOB_FEED_H_

#include <cstdint>
#include <string>

#include "base/status.h"
#include "proto/jobs.pb.h"
#include "service/rpc/job_client.h"

namespace softwire {
namespace cli {

// How long a broken stream is retried before FollowJob gives up.
constexpr double kReconnectSeconds = 30;

struct FeedOptions {
  // "submit", "watch": the command that prints, in its messages.
  std::string command;
  // One progress bar rewritten in place instead of lines (a terminal).
  bool progress_bar = false;
  // A progress line every N steps; 0: about 20 lines (as `softwire run --log-every`).
  int64_t log_every = 0;
  // Print nothing but errors.
  bool quiet = false;
  // Write every step's metrics here as `softwire run --metrics-out` does; empty: none.
  std::string metrics_out;
  // The first event to show (1: all).
  int64_t from_sequence = 1;
};

// How the feed ended.
struct FeedOutcome {
  proto::JobState state = proto::JOB_STATE_UNSPECIFIED;  // SUCCEEDED, FAILED, CANCELLED.
  std::string job_name;
  std::string error;  // Failed: the failure; cancelled: the reason.
};

// Fails before a job is followed, not after it, when `path` (--metrics-out) cannot be written:
// InvalidArgument naming the flag and the directory.
Status CheckMetricsOutput(const std::string& path);

// Follows the job's events to the terminal one, printing as it goes. Cancelled when
// client->StopWatching() was called (an interrupt); the stream's error when reconnecting did
// not help; the metrics file's error when it cannot be written.
StatusOr<FeedOutcome> FollowJob(service::JobClient* client, const std::string& job_id,
                                const FeedOptions& options);

// What a job's end is to the command: 0 when it succeeded, else 1 after printing
// "softwire COMMAND: job 'NAME' (job-3) failed: ERROR" or "... was cancelled: REASON".
int ReportOutcome(const std::string& command, const std::string& job_id,
                  const FeedOutcome& outcome);

}  // namespace cli
}  // namespace softwire

#endif  // SOFTWIRE_CLI_JOB_FEED_H_
