#include "bench/actor_overhead/caf_chain.h"

#include <caf/all.hpp>
#include <chrono>
#include <deque>
#include <future>
#include <vector>

namespace softwire {
namespace bench {
namespace {

using Clock = std::chrono::steady_clock;

void Configure(const CafChainOptions& options, caf::actor_system_config* config) {
  config->set("scheduler.policy", caf::atom_from_string(options.policy));
  config->set("scheduler.max-threads", static_cast<size_t>(options.threads));
  config->set("scheduler.max-throughput", static_cast<size_t>(300));
}

// Counts arrivals and fulfils `done` after `expected` of them.
caf::behavior Counter(caf::event_based_actor* self, int64_t expected, std::promise<void>* done) {
  auto received = std::make_shared<int64_t>(0);  // Shared by the behavior's copies.
  return {[=](int64_t) {
    if (++*received == expected) done->set_value();
  }};
}

caf::behavior Forwarder(caf::event_based_actor* self, caf::actor next) {
  return {[=](int64_t value) { self->send(next, value); }};
}

// A stage with a register of `credits` slots toward `next`: it forwards a value while it holds
// a credit, and acks the value to its predecessor once forwarded (as a consumer releases its
// input slot after its firing); without a credit it keeps the value, which holds back the
// predecessor. With no `next` it acks at once (a sink).
caf::behavior CreditedStage(caf::event_based_actor* self, caf::actor next, int credits) {
  struct State {
    caf::actor previous;
    std::deque<int64_t> waiting;
    int credits = 0;
  };
  auto state = std::make_shared<State>();  // Shared by the behavior's handlers.
  state->credits = credits;
  auto forward = [=] {
    while (!state->waiting.empty() && (!next || state->credits > 0)) {
      if (next) {
        --state->credits;
        self->send(next, state->waiting.front());
      }
      state->waiting.pop_front();
      self->send(state->previous, caf::ok_atom::value);
    }
  };
  return {
      [=](int64_t value) {
        if (!state->previous) state->previous = caf::actor_cast<caf::actor>(self->current_sender());
        state->waiting.push_back(value);
        forward();
      },
      [=](caf::ok_atom) {
        ++state->credits;
        forward();
      },
  };
}

// Sends `messages` values to `next`, never more than `credits` unacknowledged.
caf::behavior CreditedSource(caf::event_based_actor* self, caf::actor next, int64_t messages,
                             int credits) {
  struct State {
    int64_t sent = 0;
    int credits = 0;
  };
  auto state = std::make_shared<State>();  // Shared by the behavior's handlers and pump.
  state->credits = credits;
  auto pump = [=] {
    while (state->credits > 0 && state->sent < messages) {
      --state->credits;
      self->send(next, state->sent++);
    }
  };
  return {
      [=](caf::add_atom) { pump(); },
      [=](caf::ok_atom) {
        ++state->credits;
        pump();
      },
  };
}

}  // namespace

double TimeCafForwardChain(const CafChainOptions& options) {
  caf::actor_system_config config;
  Configure(options, &config);
  caf::actor_system system{config};
  std::promise<void> done;
  caf::actor next = system.spawn(Counter, options.messages, &done);
  for (int hop = 1; hop < options.actors; ++hop) next = system.spawn(Forwarder, next);
  Clock::time_point start = Clock::now();
  for (int64_t i = 0; i < options.messages; ++i) caf::anon_send(next, i);
  done.get_future().wait();
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return seconds;
}

double TimeCafCreditChain(const CafChainOptions& options) {
  caf::actor_system_config config;
  Configure(options, &config);
  caf::actor_system system{config};
  std::promise<void> done;
  // N actors as in softwire's chain: the source, N - 2 credited stages, and a last stage that
  // acks and counts.
  caf::actor last = system.spawn(
      [](caf::event_based_actor* self, int64_t expected,
         std::promise<void>* finished) -> caf::behavior {
        auto received = std::make_shared<int64_t>(0);  // Shared by the behavior's copies.
        return {[=](int64_t) {
          self->send(caf::actor_cast<caf::actor>(self->current_sender()), caf::ok_atom::value);
          if (++*received == expected) finished->set_value();
        }};
      },
      options.messages, &done);
  std::vector<caf::actor> chain = {last};
  caf::actor next = last;
  for (int hop = 2; hop < options.actors; ++hop) {
    next = system.spawn(CreditedStage, next, options.credits);
    chain.push_back(next);
  }
  caf::actor source = system.spawn(CreditedSource, next, options.messages, options.credits);
  chain.push_back(source);
  Clock::time_point start = Clock::now();
  caf::anon_send(source, caf::add_atom::value);
  done.get_future().wait();
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  // Stages hold their neighbours (a cycle of strong references): stop them explicitly.
  for (const caf::actor& actor : chain) caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
  return seconds;
}

}  // namespace bench
}  // namespace softwire
