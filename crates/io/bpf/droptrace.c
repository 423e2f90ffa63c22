// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * droptrace: counts the frames the kernel frees as dropped, at the
 * BTF-typed tracepoint skb:kfree_skb (`pktlab drops`, the drop tracer of
 * bench runs). It runs only when the kernel drops a frame, on the CPU that
 * drops it, so what it costs a frame is paid by that CPU: it decides as
 * cheaply as it can that a frame is none of its business.
 *
 * In order, cheapest first:
 * 1. A drop reason that the kernel's own counters count exactly
 *    (`COUNTED_REASON`, set before load; CPU_BACKLOG, which softnet's
 *    per-CPU `dropped` and the interface's rx_dropped count) returns at
 *    once: user space places those frames from the counters.
 * 2. A frame whose network namespace is not watched returns after three
 *    loads (the `watched` map, set by user space; empty: every namespace).
 *    Struct fields are read with plain loads, which the verifier turns
 *    into fault-safe ones, not with helper calls.
 * 3. Only pktlab test frames count (unless `COUNT_ALL` is set before
 *    load): Ethernet (with up to two VLAN tags), IPv4 or IPv6, UDP, and
 *    the test payload's magic 0x504C at the start of the UDP payload
 *    (crates/wire/src/payload.rs), read with one helper call.
 *
 * Counts are keyed by network namespace, interface, drop reason and
 * dropping location (a kernel text address, resolved in user space through
 * /proc/kallsyms) in a per-CPU hash; no per-frame event goes to user space.
 *
 * Struct layouts are not hard-coded: the structs below declare only the
 * fields read, with preserve_access_index, and the loader relocates them
 * against the running kernel's BTF (CO-RE). The drop reason is the
 * tracepoint's third argument since Linux 5.17 (`HAS_REASON`); on older
 * kernels it reads as 0.
 *
 * Build: crates/io/bpf/build.sh (clang -O2 -g -target bpf -mcpu=v3).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define MAGIC 0x504C
#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD
#define ETH_P_8021Q 0x8100
#define ETH_P_8021AD 0x88A8
#define IPPROTO_UDP 17
#define NO_OFFSET 0xffff /* an unset mac_header/network_header */
#define NO_REASON 0xffffffff
/* Mirrors `MAX_WATCHED` in crates/io/src/droptrace/mod.rs. */
#define MAX_WATCHED 8

/* Set before load (.rodata). */
const volatile __u32 COUNT_ALL = 0; /* 1: every dropped frame, not only test frames */
/* 1 when the tracepoint has the reason argument (Linux 5.17 on): user
 * space sets it when the kernel's BTF has `enum skb_drop_reason`. */
const volatile __u32 HAS_REASON = 0;
/* A reason left to the kernel's counters (NO_REASON: none). */
const volatile __u32 COUNTED_REASON = NO_REASON;

/* Mirrors `DropKey` in crates/io/src/droptrace/mod.rs. */
struct drop_key {
	__u32 netns;   /* network namespace inode (0: unknown) */
	__u32 ifindex; /* skb->dev's, else the frame's input interface */
	__u32 reason;  /* enum skb_drop_reason */
	__u32 pad;
	__u64 location; /* kernel text address that dropped it */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct drop_key);
	__type(value, __u64);
} drops SEC(".maps");

/* Frames counted while `drops` was full: [0]. Never lost silently. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} overflow SEC(".maps");

/* The namespaces whose drops count. Mirrors `Watched` in
 * crates/io/src/droptrace/mod.rs. */
struct watch {
	__u32 n; /* 0: every namespace */
	__u32 netns[MAX_WATCHED];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct watch);
} watched SEC(".maps");

/* Only the fields read; CO-RE finds their offsets in the running kernel. */
struct ns_common {
	unsigned int inum;
} __attribute__((preserve_access_index));

struct net {
	struct ns_common ns;
} __attribute__((preserve_access_index));

typedef struct {
	struct net *net;
} possible_net_t;

struct net_device {
	int ifindex;
	possible_net_t nd_net;
} __attribute__((preserve_access_index));

struct sock_common {
	possible_net_t skc_net;
} __attribute__((preserve_access_index));

struct sock {
	struct sock_common __sk_common;
} __attribute__((preserve_access_index));

struct sk_buff {
	struct net_device *dev;
	struct sock *sk;
	int skb_iif;
	unsigned char *head;
	__u16 mac_header;
	__u16 network_header;
	__be16 protocol;
} __attribute__((preserve_access_index));

/* The bytes read from the frame: two addresses and two VLAN tags (22),
 * IPv6 (40), UDP (8), the magic (2). */
#define FRAME_READ 72

/* 1 if the two bytes at `p` are the test magic. */
static __always_inline int magic_at(const __u8 *p)
{
	return ((p[0] << 8) | p[1]) == MAGIC;
}

/* 1 if the IPv4/IPv6 packet at b[off] (read from the kernel's `l3`) is
 * UDP carrying the test magic. `off` is a constant where it is inlined. */
static __always_inline int is_test_packet(const __u8 *b, __u32 off, __u16 proto,
					  const unsigned char *l3)
{
	if (proto == ETH_P_IP) {
		__u32 ihl = (b[off] & 0x0f) * 4;
		__u8 magic[2];

		if ((b[off] >> 4) != 4 || b[off + 9] != IPPROTO_UDP)
			return 0;
		/* A later fragment has no UDP header. */
		if (((b[off + 6] & 0x1f) | b[off + 7]) != 0)
			return 0;
		if (ihl == 20)
			return magic_at(&b[off + 20 + 8]);
		/* Options (test frames have none): read past them. */
		if (ihl < 20 || ihl > 60 || bpf_probe_read_kernel(magic, 2, l3 + ihl + 8))
			return 0;
		return magic_at(magic);
	}
	if (proto == ETH_P_IPV6)
		return (b[off] >> 4) == 6 && b[off + 6] == IPPROTO_UDP && magic_at(&b[off + 40 + 8]);
	return 0;
}

/* 1 if the Ethernet frame at `mac` is a test frame. */
static __always_inline int is_test_frame(const unsigned char *mac)
{
	__u8 b[FRAME_READ];
	__u16 type;

	if (bpf_probe_read_kernel(b, sizeof(b), mac))
		return 0;
	type = (b[12] << 8) | b[13];
	if (type != ETH_P_8021Q && type != ETH_P_8021AD)
		return is_test_packet(b, 14, type, mac + 14);
	type = (b[16] << 8) | b[17];
	if (type != ETH_P_8021Q && type != ETH_P_8021AD)
		return is_test_packet(b, 18, type, mac + 18);
	type = (b[20] << 8) | b[21];
	return is_test_packet(b, 22, type, mac + 22);
}

/* The skb's frame, from its MAC header when the kernel has set one before
 * the network header, else from the network header (skb->data may point
 * at either, or elsewhere, when the frame is freed). */
static __always_inline int test_frame(const struct sk_buff *skb)
{
	unsigned char *head = skb->head;
	__u16 mac = skb->mac_header;
	__u16 net = skb->network_header;
	__u8 b[FRAME_READ];

	if (mac != NO_OFFSET && mac < net)
		return is_test_frame(head + mac);
	if (net == NO_OFFSET || bpf_probe_read_kernel(b, sizeof(b), head + net))
		return 0;
	return is_test_packet(b, 0, bpf_ntohs(skb->protocol), head + net);
}

/* 1 when drops in namespace `netns` count. */
static __always_inline int is_watched(__u32 netns)
{
	__u32 zero = 0;
	struct watch *w = bpf_map_lookup_elem(&watched, &zero);
	int i;

	if (!w || w->n == 0)
		return 1;
#pragma unroll
	for (i = 0; i < MAX_WATCHED; i++)
		if (i < w->n && w->netns[i] == netns)
			return 1;
	return 0;
}

/* Adds one to `key`'s count. The counters are per CPU, but a drop in a
 * softirq can interrupt this program on the same CPU between a read and a
 * write of the same counter: the additions are atomic so that neither is
 * lost. */
static __always_inline void count(const struct drop_key *key)
{
	__u64 one = 1, *n;

	n = bpf_map_lookup_elem(&drops, key);
	if (n) {
		__sync_fetch_and_add(n, 1);
		return;
	}
	if (bpf_map_update_elem(&drops, key, &one, BPF_NOEXIST)) {
		/* Another frame of this CPU made it meanwhile, or the map is full. */
		n = bpf_map_lookup_elem(&drops, key);
		if (n) {
			__sync_fetch_and_add(n, 1);
		} else {
			__u32 zero = 0;
			__u64 *o = bpf_map_lookup_elem(&overflow, &zero);

			if (o)
				__sync_fetch_and_add(o, 1);
		}
	}
}

/* kfree_skb(skb, location, reason[, rx_sk]) */
SEC("tp_btf/kfree_skb")
int drop_count(__u64 *ctx)
{
	const struct sk_buff *skb = (const void *)ctx[0];
	struct drop_key key = {};
	struct net_device *dev;

	if (HAS_REASON) {
		key.reason = (__u32)ctx[2];
		if (key.reason == COUNTED_REASON)
			return 0;
	}
	if (!skb)
		return 0;
	dev = skb->dev;
	if (dev) {
		key.netns = dev->nd_net.net->ns.inum;
	} else {
		struct sock *sk = skb->sk;

		key.netns = sk ? sk->__sk_common.skc_net.net->ns.inum : 0;
	}
	if (!is_watched(key.netns))
		return 0;
	if (!COUNT_ALL && !test_frame(skb))
		return 0;
	key.ifindex = dev ? dev->ifindex : skb->skb_iif;
	key.location = ctx[1];
	count(&key);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
