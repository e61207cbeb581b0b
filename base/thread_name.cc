#include "base/thread_name.h"

#include <pthread.h>

namespace softwire {

void NameCurrentThread(std::string_view name) {
  std::string cut(name.substr(0, kMaxThreadNameBytes));
  pthread_setname_np(pthread_self(), cut.c_str());
}

std::string CurrentThreadName() {
  char name[kMaxThreadNameBytes + 1] = {};
  if (pthread_getname_np(pthread_self(), name, sizeof(name)) != 0) return "";
  return name;
}

ScopedThreadName::ScopedThreadName(std::string_view name) : previous_(CurrentThreadName()) {
  NameCurrentThread(name);
}

ScopedThreadName::~ScopedThreadName() {
  NameCurrentThread(previous_);
}

}  // namespace softwire
