// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * tcfwd: the `tc-forward` DUT configuration's router at tc ingress (tcx,
 * or a clsact filter in direct-action mode). For each IPv4 / IPv6 frame
 * it asks the kernel's FIB for the egress port and next hop
 * (bpf_fib_lookup), decrements the TTL or hop limit and hands the skb to
 * bpf_redirect_neigh, which resolves the next hop's MAC in the neighbour
 * table and transmits on the egress port. The skb skips the rest of the
 * stack's input: netfilter's prerouting, forward and postrouting hooks
 * never see it, which is how Cilium's datapath forwards. Everything else
 * goes on to the stack (TC_ACT_OK; fastpath.h).
 *
 * A FIB answer of "no neighbour" is forwarded too: bpf_redirect_neigh
 * resolves the neighbour itself, as the stack would.
 *
 * Build: crates/io/bpf/build.sh (clang -O2 -g -target bpf -mcpu=v3).
 */
#include "fastpath.h"

#define TC_ACT_OK 0
#define TC_ACT_SHOT 2
#define TC_ACT_REDIRECT 7

SEC("classifier") /* aya-obj 0.3 names tc programs so; libbpf reads it too */
int tc_fwd(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	struct fwd_stats *st = my_stats();
	struct bpf_redir_neigh nh = {};
	struct bpf_fib_lookup fib;
	enum verdict v;
	__u8 *ttl = 0;
	int v4 = 0;
	long act;

	if (!st)
		return TC_ACT_OK;
	st->frames++;
	v = route(skb, data, data_end, skb->ingress_ifindex, &fib, st, &ttl, &v4, 1);
	if (v != FORWARD || !ttl) {
		count_to_stack(st, v);
		return TC_ACT_OK;
	}
	decrement_ttl(ttl, v4);
	if (v4) {
		nh.nh_family = AF_INET;
		nh.ipv4_nh = fib.ipv4_dst;
	} else {
		nh.nh_family = AF_INET6;
		__builtin_memcpy(nh.ipv6_nh, fib.ipv6_dst, sizeof(nh.ipv6_nh));
	}
	act = bpf_redirect_neigh(fib.ifindex, &nh, sizeof(nh), 0);
	if (act != TC_ACT_REDIRECT) {
		st->redirect_failed++;
		return TC_ACT_SHOT;
	}
	st->forwarded++;
	return TC_ACT_REDIRECT;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
