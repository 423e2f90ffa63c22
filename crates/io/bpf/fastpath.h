// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * What the two forwarding fast paths (xdpfwd.c at XDP, tcfwd.c at tc
 * ingress) share: their counters, the header parsing and the routing
 * decision by bpf_fib_lookup, and the TTL / hop-limit decrement of a
 * router.
 *
 * Frames the fast path cannot forward (not IP, TTL expiring, the FIB
 * saying no, a neighbour to resolve at XDP) go on to the kernel's stack,
 * which forwards them, answers with ICMP or drops them with a reason that
 * the drop tracer sees: a fast path never drops on its own.
 */
#ifndef PKTLAB_FASTPATH_H
#define PKTLAB_FASTPATH_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define AF_INET 2
#define AF_INET6 10
#define PROTO_TCP 6
#define PROTO_UDP 17
#define FIB_RESULTS 16 /* bpf_fib_lookup's results 0-14; [15]: an error */

/* Per-CPU counts of one program. Mirrors `FastPathStats` in
 * crates/io/src/fastpath/stats.rs. */
struct fwd_stats {
	__u64 frames;          /* frames the program saw */
	__u64 forwarded;       /* handed to the redirect (XDP_REDIRECT, TC_ACT_REDIRECT) */
	__u64 to_stack;        /* left to the kernel's stack (XDP_PASS, TC_ACT_OK) */
	__u64 not_ip;          /* to the stack: neither IPv4 nor IPv6 (ARP, ...) */
	__u64 ttl_expired;     /* to the stack: TTL or hop limit 1 or 0 (ICMP time exceeded) */
	__u64 malformed;       /* to the stack: shorter than its headers, or IPv4 options */
	__u64 no_port;         /* to the stack: the FIB's port is not one of the program's */
	__u64 redirect_failed; /* the redirect helper refused (the frame is dropped) */
	__u64 steered;         /* xdp_steer: queued for a forwarding CPU (cpumap) */
	__u64 steer_failed;    /* xdp_steer: the cpumap redirect helper refused */
	__u64 fib[FIB_RESULTS]; /* bpf_fib_lookup's result (BPF_FIB_LKUP_RET_*) */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fwd_stats);
} stats SEC(".maps");

static __always_inline struct fwd_stats *my_stats(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&stats, &zero);
}

/* Why a frame is not forwarded by the fast path. */
enum verdict {
	FORWARD = 0,
	NOT_IP,
	TTL_EXPIRED,
	MALFORMED,
	FIB_SAYS_NO,
};

/* Parses the frame at [data, data_end) and asks the FIB where it goes.
 * On FORWARD, `fib` holds the egress ifindex, the MACs and the next hop,
 * and `*ttl` points at the TTL / hop-limit byte to decrement. With
 * `no_neigh_ok`, a route whose next hop has no neighbour entry yet is
 * FORWARD too (the FIB has filled in the port and the next hop; the MACs
 * are left to bpf_redirect_neigh). */
static __always_inline enum verdict route(void *ctx, void *data, void *data_end,
					  __u32 ingress, struct bpf_fib_lookup *fib,
					  struct fwd_stats *st, __u8 **ttl, int *v4,
					  int no_neigh_ok)
{
	struct ethhdr *eth = data;
	long rc;

	if ((void *)(eth + 1) > data_end)
		return MALFORMED;
	__builtin_memset(fib, 0, sizeof(*fib));
	fib->ifindex = ingress;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);

		if ((void *)(ip + 1) > data_end || ip->ihl != 5)
			return MALFORMED;
		if (ip->ttl <= 1)
			return TTL_EXPIRED;
		fib->family = AF_INET;
		fib->tos = ip->tos;
		fib->l4_protocol = ip->protocol;
		fib->tot_len = bpf_ntohs(ip->tot_len);
		fib->ipv4_src = ip->saddr;
		fib->ipv4_dst = ip->daddr;
		*ttl = &ip->ttl;
		*v4 = 1;
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) > data_end)
			return MALFORMED;
		if (ip6->hop_limit <= 1)
			return TTL_EXPIRED;
		fib->family = AF_INET6;
		fib->flowinfo = *(__be32 *)ip6 & bpf_htonl(0x0FFFFFFF);
		fib->l4_protocol = ip6->nexthdr;
		fib->tot_len = bpf_ntohs(ip6->payload_len) + sizeof(*ip6);
		__builtin_memcpy(fib->ipv6_src, &ip6->saddr, sizeof(fib->ipv6_src));
		__builtin_memcpy(fib->ipv6_dst, &ip6->daddr, sizeof(fib->ipv6_dst));
		*ttl = &ip6->hop_limit;
		*v4 = 0;
	} else {
		return NOT_IP;
	}
	rc = bpf_fib_lookup(ctx, fib, sizeof(*fib), 0);
	if (rc >= 0 && rc < FIB_RESULTS - 1)
		st->fib[rc]++;
	else
		st->fib[FIB_RESULTS - 1]++;
	if (rc == BPF_FIB_LKUP_RET_SUCCESS)
		return FORWARD;
	if (no_neigh_ok && rc == BPF_FIB_LKUP_RET_NO_NEIGH)
		return FORWARD;
	return FIB_SAYS_NO;
}

/* A router's TTL decrement. For IPv4 the header checksum is updated
 * incrementally (RFC 1624): the TTL is the high byte of its 16-bit word,
 * so the word drops by 0x0100 and the one's-complement checksum rises by
 * as much, with the end-around carry (a sum of 0xFFFF, the other zero,
 * becomes 0, as the kernel's own forwarding writes it). */
static __always_inline void decrement_ttl(__u8 *ttl, int v4)
{
	if (v4) {
		struct iphdr *ip = (void *)(ttl - __builtin_offsetof(struct iphdr, ttl));
		__u32 sum = (__u32)ip->check + (__u32)bpf_htons(0x0100);

		ip->check = (__u16)(sum + (sum >= 0xFFFF));
	}
	(*ttl)--;
}

/* Counts a frame left to the stack for `why`. */
static __always_inline void count_to_stack(struct fwd_stats *st, enum verdict why)
{
	st->to_stack++;
	if (why == NOT_IP)
		st->not_ip++;
	else if (why == TTL_EXPIRED)
		st->ttl_expired++;
	else if (why == MALFORMED)
		st->malformed++;
}

#endif
