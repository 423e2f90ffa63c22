// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdpdrops: counts the frames XDP drops, which never reach skb:kfree_skb
 * (an XDP frame has no skb to free). Four BTF-typed tracepoints:
 *
 *   xdp:xdp_exception       a program returned XDP_ABORTED or an unknown
 *                           action, or the driver could not do its XDP_TX
 *                           (veth: a full peer ring): one frame each;
 *   xdp:xdp_redirect_err    an XDP_REDIRECT the kernel could not queue
 *                           (a target without ndo_xdp_xmit, such as a
 *                           veth whose peer has no NAPI; a target that is
 *                           down; a frame above its MTU; an empty map
 *                           slot): one frame each;
 *   xdp:xdp_devmap_xmit     a flush of the redirect bulk queue: `drops`
 *                           frames the target's ndo_xdp_xmit refused (a
 *                           full ring);
 *   xdp:xdp_bulk_tx         a flush of XDP_TX frames: `drops` refused;
 *   xdp:xdp_cpumap_enqueue  frames queued for another CPU (CPUMAP): `drops`
 *                           found its queue full;
 *   xdp:xdp_cpumap_kthread  that CPU's thread: `drops` frames it could not
 *                           make an skb for.
 *
 * (XDP_DROP by a program fires nothing: programs count their own.) The
 * events carry no frame, so every frame counts, not only test frames.
 * Counts are keyed by the namespace and interface of the place (the
 * target of a refused transmit, the receiving port otherwise), the other
 * port, the cause, the error and the action, in a per-CPU hash that user
 * space reads when it wants. A CPUMAP's events name no interface: their
 * key holds the map's id (as `peer`) and the CPU (as `detail`).
 *
 * Build: crates/io/bpf/build.sh (clang -O2 -g -target bpf -mcpu=v3).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

/* Mirrors `XdpDropCause` in crates/io/src/xdpdrops/mod.rs. */
#define CAUSE_EXCEPTION 1
#define CAUSE_REDIRECT_ERR 2
#define CAUSE_XMIT 3
#define CAUSE_BULK_TX 4
#define CAUSE_CPU_QUEUE 5
#define CAUSE_CPU_ALLOC 6

/* Mirrors `XdpDropKey` in crates/io/src/xdpdrops/mod.rs. */
struct xdp_drop_key {
	__u32 netns;   /* the place's network namespace inode */
	__u32 ifindex; /* the place: where the frames were refused */
	__u32 peer;    /* the other port: redirect target or source (0: none); a CPUMAP's id */
	__u32 cause;   /* CAUSE_* */
	__s32 err;     /* negative errno (0: none given) */
	__u32 detail;  /* an exception's XDP action; a redirect's map type; a CPUMAP's CPU */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 1024);
	__type(key, struct xdp_drop_key);
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

static __always_inline void place(struct xdp_drop_key *k, const struct net_device *dev)
{
	if (!dev)
		return;
	k->ifindex = BPF_CORE_READ(dev, ifindex);
	k->netns = BPF_CORE_READ(dev, nd_net.net, ns.inum);
}

static __always_inline __u32 index_of(const struct net_device *dev)
{
	return dev ? BPF_CORE_READ(dev, ifindex) : 0;
}

static __always_inline void add(struct xdp_drop_key *k, __u64 n)
{
	__u64 *v;

	if (n == 0)
		return;
	/* Per-CPU counters, but a tracepoint in a softirq can interrupt this
	 * program on the same CPU: the additions are atomic. */
	v = bpf_map_lookup_elem(&drops, k);
	if (v) {
		__sync_fetch_and_add(v, n);
		return;
	}
	if (bpf_map_update_elem(&drops, k, &n, BPF_NOEXIST)) {
		v = bpf_map_lookup_elem(&drops, k);
		if (v) {
			__sync_fetch_and_add(v, n);
		} else {
			__u32 zero = 0;
			__u64 *o = bpf_map_lookup_elem(&overflow, &zero);

			if (o)
				__sync_fetch_and_add(o, n);
		}
	}
}

/* xdp_exception(dev, xdp, act) */
SEC("tp_btf/xdp_exception")
int xdp_exception(__u64 *ctx)
{
	struct xdp_drop_key k = {};

	place(&k, (const void *)ctx[0]);
	k.cause = CAUSE_EXCEPTION;
	k.detail = (__u32)ctx[2];
	add(&k, 1);
	return 0;
}

/* xdp_redirect_err(dev, xdp, tgt, err, map_type, map_id, index): `index`
 * is the target's ifindex for bpf_redirect and for a map keyed by it. */
static __always_inline int redirect_err(__u64 *ctx)
{
	struct xdp_drop_key k = {};

	place(&k, (const void *)ctx[0]);
	k.cause = CAUSE_REDIRECT_ERR;
	k.err = (__s32)ctx[3];
	k.detail = (__u32)ctx[4];
	k.peer = (__u32)ctx[6];
	add(&k, 1);
	return 0;
}

SEC("tp_btf/xdp_redirect_err")
int xdp_redirect_err(__u64 *ctx)
{
	return redirect_err(ctx);
}

/* Older kernels had a separate event for map redirects; user space
 * attaches this one only where the kernel has it. */
SEC("tp_btf/xdp_redirect_map_err")
int xdp_redirect_map_err(__u64 *ctx)
{
	return redirect_err(ctx);
}

/* xdp_devmap_xmit(from_dev, to_dev, sent, drops, err) */
SEC("tp_btf/xdp_devmap_xmit")
int xdp_devmap_xmit(__u64 *ctx)
{
	struct xdp_drop_key k = {};
	int drops = (int)ctx[3];

	if (drops <= 0)
		return 0;
	place(&k, (const void *)ctx[1]);
	k.peer = index_of((const void *)ctx[0]);
	k.cause = CAUSE_XMIT;
	k.err = (__s32)ctx[4];
	add(&k, drops);
	return 0;
}

/* xdp_bulk_tx(dev, sent, drops, err) */
SEC("tp_btf/xdp_bulk_tx")
int xdp_bulk_tx(__u64 *ctx)
{
	struct xdp_drop_key k = {};
	int drops = (int)ctx[2];

	if (drops <= 0)
		return 0;
	place(&k, (const void *)ctx[0]);
	k.cause = CAUSE_BULK_TX;
	k.err = (__s32)ctx[3];
	add(&k, drops);
	return 0;
}

/* xdp_cpumap_enqueue(map_id, processed, drops, to_cpu) */
SEC("tp_btf/xdp_cpumap_enqueue")
int xdp_cpumap_enqueue(__u64 *ctx)
{
	struct xdp_drop_key k = {};
	__u32 drops = (__u32)ctx[2];

	k.cause = CAUSE_CPU_QUEUE;
	k.peer = (__u32)ctx[0];
	k.detail = (__u32)ctx[3];
	add(&k, drops);
	return 0;
}

/* xdp_cpumap_kthread(map_id, processed, drops, sched, stats): `drops`
 * are frames the thread could not allocate an skb for (the program's own
 * XDP_DROPs and failed redirects are in `stats`, and the latter fire
 * xdp_redirect_err too). */
SEC("tp_btf/xdp_cpumap_kthread")
int xdp_cpumap_kthread(__u64 *ctx)
{
	struct xdp_drop_key k = {};
	__u32 drops = (__u32)ctx[2];

	k.cause = CAUSE_CPU_ALLOC;
	k.peer = (__u32)ctx[0];
	k.detail = bpf_get_smp_processor_id();
	add(&k, drops);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
