// SPDX-License-Identifier: BSD-2-Clause
//
// XDP programs of pktlab's AF_XDP backend. Rebuild the committed object with
// `bpf/build.sh`; `bpf/build.sh --check` verifies that it matches this source.

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

// One AF_XDP socket per RX queue, keyed by queue index. pktlab sets
// max_entries to the interface's queue count when it loads the object.
struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} xsks SEC(".maps");

// Hands every frame of a queue that has a socket to that socket. The low
// bits of the flags are the action for a queue without one: XDP_PASS, so
// the kernel's stack still sees traffic on the other queues.
SEC("xdp")
int xsk_redirect(struct xdp_md *ctx)
{
	return bpf_redirect_map(&xsks, ctx->rx_queue_index, XDP_PASS);
}

// A sink that drops every frame at the earliest point a driver offers: the
// speed measurement counts frames with the interface's own rx counters.
SEC("xdp")
int xdp_drop(struct xdp_md *ctx)
{
	return XDP_DROP;
}

char _license[] SEC("license") = "BSD";
