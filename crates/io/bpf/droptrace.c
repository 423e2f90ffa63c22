// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * droptrace: counts the frames the kernel frees as dropped, at the
 * BTF-typed tracepoint skb:kfree_skb (`pktlab drops`, the drop tracer of
 * bench runs). It runs only when the kernel drops a frame.
 *
 * Only pktlab test frames are counted (unless `COUNT_ALL` is set before
 * load): Ethernet (with up to two VLAN tags), IPv4 or IPv6, UDP, and the
 * test payload's magic 0x504C at the start of the UDP payload
 * (crates/wire/src/payload.rs). Counts are keyed by network namespace,
 * interface, drop reason and dropping location (a kernel text address,
 * resolved in user space through /proc/kallsyms) in a per-CPU hash; no
 * per-frame event goes to user space.
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
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>

#define MAGIC 0x504C
#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD
#define ETH_P_8021Q 0x8100
#define ETH_P_8021AD 0x88A8
#define IPPROTO_UDP 17
#define NO_OFFSET 0xffff /* an unset mac_header/network_header */

/* Set before load (.rodata). */
const volatile __u32 COUNT_ALL = 0; /* 1: every dropped frame, not only test frames */
/* 1 when the tracepoint has the reason argument (Linux 5.17 on): user
 * space sets it when the kernel's BTF has `enum skb_drop_reason`. */
const volatile __u32 HAS_REASON = 0;

/* Mirrors `DropKey` in crates/io/src/droptrace/maps.rs. */
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

/* The bytes read from the IP header on: IPv6 (40) + UDP (8) + magic (2). */
#define L3_READ 52

/* 1 if the two bytes at `p` are the test magic. */
static __always_inline int magic_at(const __u8 *p)
{
	return ((p[0] << 8) | p[1]) == MAGIC;
}

/* 1 if the IPv4/IPv6 packet at `l3` is UDP carrying the test magic. */
static __always_inline int is_test_packet(const unsigned char *l3, __u16 proto)
{
	__u8 b[L3_READ];

	if (bpf_probe_read_kernel(b, sizeof(b), l3))
		return 0;
	if (proto == ETH_P_IP) {
		__u32 ihl = (b[0] & 0x0f) * 4;

		if ((b[0] >> 4) != 4 || b[9] != IPPROTO_UDP)
			return 0;
		/* A later fragment has no UDP header. */
		if (((b[6] & 0x1f) | b[7]) != 0)
			return 0;
		if (ihl == 20)
			return magic_at(&b[20 + 8]);
		/* Options (test frames have none): read past them. */
		if (ihl < 20 || ihl > 60 || bpf_probe_read_kernel(b, 2, l3 + ihl + 8))
			return 0;
		return magic_at(&b[0]);
	}
	if (proto == ETH_P_IPV6)
		return (b[0] >> 4) == 6 && b[6] == IPPROTO_UDP && magic_at(&b[40 + 8]);
	return 0;
}

/* 1 if the Ethernet frame at `mac` is a test frame. */
static __always_inline int is_test_frame(const unsigned char *mac)
{
	__u8 eth[22]; /* two addresses, two VLAN tags, the type */
	__u16 type;

	if (bpf_probe_read_kernel(eth, sizeof(eth), mac))
		return 0;
	type = (eth[12] << 8) | eth[13];
	if (type != ETH_P_8021Q && type != ETH_P_8021AD)
		return is_test_packet(mac + 14, type);
	type = (eth[16] << 8) | eth[17];
	if (type != ETH_P_8021Q && type != ETH_P_8021AD)
		return is_test_packet(mac + 18, type);
	type = (eth[20] << 8) | eth[21];
	return is_test_packet(mac + 22, type);
}

/* The skb's frame, from its MAC header when the kernel has set one before
 * the network header, else from the network header (skb->data may point
 * at either, or elsewhere, when the frame is freed). */
static __always_inline int test_frame(const struct sk_buff *skb)
{
	unsigned char *head = BPF_CORE_READ(skb, head);
	__u16 mac = BPF_CORE_READ(skb, mac_header);
	__u16 net = BPF_CORE_READ(skb, network_header);

	if (mac != NO_OFFSET && mac < net)
		return is_test_frame(head + mac);
	if (net == NO_OFFSET)
		return 0;
	return is_test_packet(head + net, bpf_ntohs(BPF_CORE_READ(skb, protocol)));
}

/* kfree_skb(skb, location, reason[, rx_sk]) */
SEC("tp_btf/kfree_skb")
int drop_count(__u64 *ctx)
{
	const struct sk_buff *skb = (const void *)ctx[0];
	struct drop_key key = {};
	struct net_device *dev;
	__u64 one = 1, *n;

	if (!skb)
		return 0;
	if (!COUNT_ALL && !test_frame(skb))
		return 0;
	key.location = ctx[1];
	if (HAS_REASON)
		key.reason = (__u32)ctx[2];
	dev = BPF_CORE_READ(skb, dev);
	if (dev) {
		key.ifindex = BPF_CORE_READ(dev, ifindex);
		key.netns = BPF_CORE_READ(dev, nd_net.net, ns.inum);
	} else {
		key.ifindex = BPF_CORE_READ(skb, skb_iif);
		key.netns = BPF_CORE_READ(skb, sk, __sk_common.skc_net.net, ns.inum);
	}
	/* The counters are per CPU, but a drop in a softirq can interrupt
	 * this program on the same CPU between a read and a write of the
	 * same counter: the additions are atomic so that neither is lost. */
	n = bpf_map_lookup_elem(&drops, &key);
	if (n) {
		__sync_fetch_and_add(n, 1);
		return 0;
	}
	if (bpf_map_update_elem(&drops, &key, &one, BPF_NOEXIST)) {
		/* Another frame of this CPU made it meanwhile, or the map is full. */
		n = bpf_map_lookup_elem(&drops, &key);
		if (n) {
			__sync_fetch_and_add(n, 1);
		} else {
			__u32 zero = 0;
			__u64 *o = bpf_map_lookup_elem(&overflow, &zero);

			if (o)
				__sync_fetch_and_add(o, 1);
		}
	}
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
