// What the plugin appends to a device's immediate command list. Commands of a Level Zero command
// list may overlap unless a barrier separates them: every kernel and timestamp is followed by a
// barrier, so the list runs in order as a CUDA stream does. Copies and waits finish on the host
// before they return (through the device's `done` event). Every function here expects the caller
// to hold device.lock.
#pragma once

#include "devices.hpp"

namespace yirage::level_zero {

// Appends a launch of `kernel` (its arguments and group size already set) and a barrier.
void append_kernel(const Api &api, Device &device, ze_kernel_handle_t kernel, const ze_group_count_t &groups);

// Waits until everything appended so far has finished.
void finish(const Api &api, Device &device);

// Copies between device memory and pageable host memory through the staging buffer, after
// everything appended so far; returns when the bytes have arrived.
void copy_to_device(const Api &api, Device &device, void *destination, const void *source, size_t bytes);
void copy_to_host(const Api &api, Device &device, void *destination, const void *source, size_t bytes);

// A point in a command list: the device's global timestamp, written into host memory when the
// commands before it have finished, with an event to wait for it.
struct Timestamp {
  ze_event_pool_handle_t pool = nullptr;
  ze_event_handle_t written = nullptr;
  uint64_t *value = nullptr;  // 8 bytes of zeMemAllocHost
  bool recorded = false;
};

// These two do not need device.lock.
Timestamp create_timestamp(const Api &api, const Device &device);
void release_timestamp(const Api &api, const Device &device, Timestamp &timestamp);

// Appends the write (and a barrier); a timestamp recorded before is waited for first.
void record_timestamp(const Api &api, Device &device, Timestamp &timestamp);

// Waits for a recorded timestamp and returns its ticks (device.timer_hz per second), masked to
// the device's valid bits. Needs no device.lock.
uint64_t read_timestamp(const Api &api, const Device &device, const Timestamp &timestamp);

}  // namespace yirage::level_zero
