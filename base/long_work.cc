#include "base/long_work.h"

namespace softwire {
namespace {

thread_local LongWorkListener* thread_listener = nullptr;
thread_local bool in_long_work = false;

}  // namespace

void SetThreadLongWorkListener(LongWorkListener* listener) {
  thread_listener = listener;
}

LongWorkListener* ThreadLongWorkListener() {
  return thread_listener;
}

LongWorkScope::LongWorkScope(bool long_work) {
  if (!long_work || thread_listener == nullptr || in_long_work) return;
  told_ = thread_listener;
  in_long_work = true;
  told_->LongWorkBegan();
}

LongWorkScope::~LongWorkScope() {
  if (told_ == nullptr) return;
  in_long_work = false;
  told_->LongWorkEnded();
}

}  // namespace softwire
