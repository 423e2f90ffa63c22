// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdpfwd: the `xdp-forward` DUT configuration's router at XDP. On the
 * DUT's ports it routes each IPv4 / IPv6 frame by the kernel's own FIB
 * (bpf_fib_lookup: routes, neighbours, the forwarding sysctl), decrements
 * the TTL or hop limit, rewrites the MACs and redirects the frame to the
 * egress port before any skb exists, as the kernel's xdp_fwd sample and
 * xdp-tools' xdp-forward do. Everything else goes to the stack
 * (fastpath.h).
 *
 * Two ways to reach the egress port:
 *   xdp_fwd         bpf_redirect(ifindex): any port of the namespace;
 *   xdp_fwd_devmap  bpf_redirect_map() through the DEVMAP_HASH `ports`,
 *                   filled by user space with the ports it attached to;
 *                   a FIB answer outside it goes to the stack.
 * Both end in the kernel's per-CPU bulk queue, flushed once per NAPI poll.
 *
 * Where it runs: a NIC runs XDP in its NAPI poll, on the CPU its queue's
 * interrupt goes to. A veth runs it on the CPU that transmitted into its
 * peer: in the built-in lab, the generator's. To forward on the DUT's
 * CPUs there, as RSS and interrupt affinity would on hardware, `xdp_steer`
 * is attached instead: it queues each frame on a DUT CPU, chosen by a hash
 * of its addresses and ports, through the CPUMAP `fwd_cpus`, whose kernel
 * thread on that CPU runs the same router (`xdp_fwd_cpumap`,
 * `xdp_fwd_devmap_cpumap`). The queue's overflow is the DUT's input drop,
 * as RPS's backlog is for the stack.
 *
 * "xdp.frags": veth refuses a program that does not take multi-buffer
 * frames when its peer's MTU is above a page (the built-in lab's is 9000);
 * the headers read here are always in the first buffer.
 *
 * Build: crates/io/bpf/build.sh (clang -O2 -g -target bpf -mcpu=v3).
 */
#include "fastpath.h"

#define MAX_PORTS 64
#define MAX_CPUS 64

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__uint(max_entries, MAX_PORTS);
	__type(key, __u32); /* ifindex */
	__type(value, struct bpf_devmap_val); /* the same ifindex, no program */
} ports SEC(".maps");

/* The forwarding CPUs' queues, by CPU number (user space sizes it to the
 * highest CPU it steers to, plus one). */
struct {
	__uint(type, BPF_MAP_TYPE_CPUMAP);
	__uint(max_entries, MAX_CPUS);
	__type(key, __u32);
	__type(value, struct bpf_cpumap_val);
} fwd_cpus SEC(".maps");

/* The CPUs steered to: entries 0 to STEER_CPUS - 1 hold CPU numbers. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_CPUS);
	__type(key, __u32);
	__type(value, __u32);
} steer_to SEC(".maps");

/* How many entries of `steer_to` are set (user space, before load). */
const volatile __u32 STEER_CPUS = 1;

static __always_inline int forward(struct xdp_md *ctx, int use_map)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct fwd_stats *st = my_stats();
	struct bpf_fib_lookup fib;
	enum verdict v;
	__u8 *ttl = 0;
	int v4 = 0;
	long act;

	if (!st)
		return XDP_PASS;
	st->frames++;
	v = route(ctx, data, data_end, ctx->ingress_ifindex, &fib, st, &ttl, &v4, 0);
	if (v != FORWARD || !ttl) {
		count_to_stack(st, v);
		return XDP_PASS;
	}
	if (use_map && !bpf_map_lookup_elem(&ports, &fib.ifindex)) {
		st->no_port++;
		st->to_stack++;
		return XDP_PASS;
	}
	decrement_ttl(ttl, v4);
	__builtin_memcpy(data, fib.dmac, ETH_ALEN);
	__builtin_memcpy(data + ETH_ALEN, fib.smac, ETH_ALEN);
	if (use_map)
		act = bpf_redirect_map(&ports, fib.ifindex, 0);
	else
		act = bpf_redirect(fib.ifindex, 0);
	if (act != XDP_REDIRECT) {
		st->redirect_failed++;
		return (int)act;
	}
	st->forwarded++;
	return XDP_REDIRECT;
}

SEC("xdp.frags")
int xdp_fwd(struct xdp_md *ctx)
{
	return forward(ctx, 0);
}

SEC("xdp.frags")
int xdp_fwd_devmap(struct xdp_md *ctx)
{
	return forward(ctx, 1);
}

SEC("xdp.frags/cpumap")
int xdp_fwd_cpumap(struct xdp_md *ctx)
{
	return forward(ctx, 0);
}

SEC("xdp.frags/cpumap")
int xdp_fwd_devmap_cpumap(struct xdp_md *ctx)
{
	return forward(ctx, 1);
}

/* A flow's hash: its addresses and, for UDP and TCP, its ports, so that
 * one flow stays on one CPU (in order), as RPS keeps it. */
static __always_inline __u32 flow_hash(void *data, void *data_end)
{
	struct ethhdr *eth = data;
	__u32 h = 0, l4 = 0;
	__u8 proto = 0;
	void *next = 0;

	if ((void *)(eth + 1) > data_end)
		return 0;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);

		if ((void *)(ip + 1) > data_end)
			return 0;
		h = ip->saddr ^ ip->daddr;
		proto = ip->protocol;
		if (ip->ihl == 5)
			next = ip + 1;
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) > data_end)
			return 0;
		h = ip6->saddr.in6_u.u6_addr32[3] ^ ip6->daddr.in6_u.u6_addr32[3] ^
		    ip6->saddr.in6_u.u6_addr32[2] ^ ip6->daddr.in6_u.u6_addr32[2];
		proto = ip6->nexthdr;
		next = ip6 + 1;
	}
	if (next && (proto == PROTO_UDP || proto == PROTO_TCP) && next + 4 <= data_end)
		l4 = *(__u32 *)next;
	h ^= l4 ^ proto;
	/* Fibonacci hashing: the high bits mix every input bit. */
	return (h * 2654435769u) >> 16;
}

SEC("xdp.frags")
int xdp_steer(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct fwd_stats *st = my_stats();
	__u32 n = STEER_CPUS, i = 0, *cpu;
	long act;

	if (!st)
		return XDP_PASS;
	if (n > 1 && n <= MAX_CPUS)
		i = flow_hash(data, data_end) % n;
	cpu = bpf_map_lookup_elem(&steer_to, &i);
	if (!cpu) /* i < STEER_CPUS <= MAX_CPUS: never */
		return XDP_PASS;
	act = bpf_redirect_map(&fwd_cpus, *cpu, 0);
	if (act != XDP_REDIRECT) {
		st->steer_failed++;
		return (int)act;
	}
	st->steered++;
	return XDP_REDIRECT;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
