// SPDX-License-Identifier: BSD-2-Clause
//
// XDP programs of pktlab's AF_XDP backend. Rebuild the committed object with
// `build.sh` beside this file; `build.sh --check` verifies it matches this source.

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

// Both programs are frags-aware (section "xdp.frags", loaded with
// BPF_F_XDP_HAS_FRAGS): they never read past the first buffer, so a frame
// in several buffers is no problem for them, and drivers that accept only
// such programs above a page-sized MTU (veth at the lab's MTU 9000) then
// attach them in native mode rather than refusing.

// Hands every frame of a queue that has a socket to that socket. The low
// bits of the flags are the action for a queue without one: XDP_PASS, so
// the kernel's stack still sees traffic on the other queues. A frame longer
// than the socket's chunk (a multi-buffer one included) is refused by the
// kernel's AF_XDP code and counted in the socket's rx_dropped
// (XDP_STATISTICS): the socket is not bound with XDP_USE_SG.
SEC("xdp.frags")
int xsk_redirect(struct xdp_md *ctx)
{
	return bpf_redirect_map(&xsks, ctx->rx_queue_index, XDP_PASS);
}

// A sink that drops every frame at the earliest point a driver offers: the
// speed measurement counts frames with the interface's own rx counters.
SEC("xdp.frags")
int xdp_drop(struct xdp_md *ctx)
{
	return XDP_DROP;
}

char _license[] SEC("license") = "BSD";
