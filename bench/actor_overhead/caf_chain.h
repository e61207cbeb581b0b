// Raw CAF messaging through a chain of actors, measured in the same program as softwire's own
// chain so the two can be compared as a ratio on a noisy machine.
#ifndef SOFTWIRE_BENCH_ACTOR_OVERHEAD_CAF_CHAIN_H_
#define SOFTWIRE_BENCH_ACTOR_OVERHEAD_CAF_CHAIN_H_

#include <cstdint>
#include <string>

namespace softwire {
namespace bench {

struct CafChainOptions {
  int actors = 16;  // Actors in the chain, the first (or the sender) included.
  int64_t messages = 100000;
  int credits = 2;  // Window of the credited variant (an ack per hop per message).
  int threads = 1;
  std::string policy = "sharing";
};

// Seconds to push every message through every hop, one-way: each hop forwards to the next.
double TimeCafForwardChain(const CafChainOptions& options);

// The same with credits like softwire's registers: each hop forwards the message and acks it
// to its predecessor, which sends on only while it holds a credit. Two messages per hop per
// message, as softwire's Ready and Release.
double TimeCafCreditChain(const CafChainOptions& options);

}  // namespace bench
}  // namespace softwire

#endif  // SOFTWIRE_BENCH_ACTOR_OVERHEAD_CAF_CHAIN_H_
