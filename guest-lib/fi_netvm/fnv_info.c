// SPDX-License-Identifier: MIT
/*
 * What the provider offers (one fi_info per /dev/netvmN), and whether it
 * meets an application's hints: an FI_EP_RDM entry, then an FI_EP_DGRAM
 * one.  The capability lists are exactly what fnv_msg.c (datagrams) and
 * fnv_rdm_*.c (RDM) do: docs/libfabric.md has the matrix.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fnv_rdm.h"

/* FI_EP_DGRAM: fnv_msg.c */
#define FNV_CAPS	(FI_MSG | FI_SEND | FI_RECV | FI_SOURCE | \
			 FI_LOCAL_COMM | FI_REMOTE_COMM)
/* FI_EP_RDM: fnv_rdm_*.c */
#define FNV_RDM_CAPS	(FNV_CAPS | FI_TAGGED | FI_DIRECTED_RECV)
#define FNV_RDM_ORDER	FI_ORDER_SAS	/* a sender's messages match in order */
/* RDM on NetVM (fnv_rma.c, fnv_atomic.c), where the application takes
 * the provider's keys (FI_MR_PROV_KEY) */
#define FNV_RMA_CAPS	(FI_RMA | FI_ATOMIC | FI_READ | FI_WRITE | \
			 FI_REMOTE_READ | FI_REMOTE_WRITE)

/* "netvm:NODE:PORT" (fi_av_straddr's form, the NIC index after a '/') */
bool fnv_parse_addr(const char *s, struct fnv_addr *a)
{
	unsigned int node, port, nic = 0;
	int n = 0;

	if (sscanf(s, "netvm:%u:%u%n", &node, &port, &n) != 2)
		return false;
	if (s[n] == '/' && sscanf(s + n, "/%u%n", &nic, &n) != 1)
		return false;
	if (s[n] || node >= NVM_UNET_NODES || !port ||
	    port >= NVM_UNET_CHANNELS || nic >= FNV_DOMAINS)
		return false;
	a->magic = FNV_ADDR_MAGIC;
	a->node = (uint16_t)node;
	a->port = (uint16_t)port;
	a->nic = (uint16_t)nic;
	return true;
}

/* What one endpoint type offers. */
struct fnv_kind {
	enum fi_ep_type type;
	uint64_t caps, tx_caps, rx_caps, order;
	bool rma;		/* FNV_RMA_CAPS, if the keys may be ours */
	size_t msg_max, inject_max, tx_size, rx_size, cq_data;
};

static const struct fnv_kind kinds[] = {
	{
		.type = FI_EP_RDM, .caps = FNV_RDM_CAPS,
		.tx_caps = FI_MSG | FI_TAGGED | FI_SEND,
		.rx_caps = FI_MSG | FI_TAGGED | FI_RECV | FI_SOURCE |
			   FI_DIRECTED_RECV,
		/* larger than one U-Net message: rendezvous */
		.order = FNV_RDM_ORDER, .msg_max = FNV_RDV_MAX,
		.inject_max = FNV_RDM_MSG_MAX,
		.tx_size = FNV_RDM_WIN, .rx_size = FNV_RDM_POSTED,
		.cq_data = sizeof(uint64_t), .rma = true,
	},
	{
		.type = FI_EP_DGRAM, .caps = FNV_CAPS,
		.tx_caps = FI_MSG | FI_SEND,
		.rx_caps = FI_MSG | FI_RECV | FI_SOURCE,
		.order = FI_ORDER_NONE, .msg_max = FNV_MSG_MAX,
		.inject_max = FNV_MSG_MAX,
		.tx_size = FNV_TX_SIZE, .rx_size = FNV_RX_SIZE,
	},
};

/* Whether the application takes keys the provider chooses (no hints,
 * or FI_MR_PROV_KEY among the modes it handles): RMA needs them. */
static bool prov_keys_ok(const struct fi_info *h)
{
	return !h || !h->domain_attr ||
	       (h->domain_attr->mr_mode & FI_MR_PROV_KEY);
}

/* What kind k offers to an application with hints h. */
static uint64_t offered_caps(const struct fi_info *h, const struct fnv_kind *k)
{
	return k->caps | (k->rma && prov_keys_ok(h) ? FNV_RMA_CAPS : 0);
}

/* NULL if the hints can be met, else what cannot (for FI_LOG_LEVEL=info). */
static const char *hints_refused(const struct fi_info *h, const char *dom_name,
				 const struct fnv_kind *k)
{
	uint64_t caps = offered_caps(h, k);

	if (!h)
		return NULL;
	if ((h->caps & ~caps) & FNV_RMA_CAPS && k->rma)
		return "memory registration mode (RMA needs FI_MR_PROV_KEY)";
	if (h->caps & ~caps)
		return "capabilities";
	if (h->addr_format != FI_FORMAT_UNSPEC)
		return "address format";
	if (h->ep_attr && h->ep_attr->type != FI_EP_UNSPEC &&
	    h->ep_attr->type != k->type)
		return "endpoint type";
	if (h->ep_attr && h->ep_attr->protocol != FI_PROTO_UNSPEC)
		return "protocol";
	if (h->fabric_attr && h->fabric_attr->name &&
	    strcmp(h->fabric_attr->name, FNV_NAME))
		return "fabric name";
	if (h->domain_attr) {
		const struct fi_domain_attr *d = h->domain_attr;

		if (d->name && strcmp(d->name, dom_name))
			return "domain name";
		if (d->control_progress == FI_PROGRESS_AUTO ||
		    d->data_progress == FI_PROGRESS_AUTO)
			return "automatic progress";
		if (d->cq_data_size > k->cq_data)
			return "remote CQ data";
	}
	if (h->tx_attr && ((h->tx_attr->caps & ~caps) ||
			   (h->tx_attr->msg_order & ~k->order) ||
			   h->tx_attr->comp_order ||
			   h->tx_attr->inject_size > k->inject_max ||
			   h->tx_attr->iov_limit > FNV_IOV_MAX))
		return "transmit attributes";
	if (h->rx_attr && ((h->rx_attr->caps & ~caps) ||
			   (h->rx_attr->msg_order & ~k->order) ||
			   h->rx_attr->comp_order ||
			   h->rx_attr->iov_limit > FNV_IOV_MAX))
		return "receive attributes";
	return NULL;
}

/* caps with the directions a primary capability implies when none is
 * named (FI_MSG alone means sending and receiving): what the transmit
 * and receive attributes may list. */
static uint64_t implied(uint64_t caps)
{
	if (!(caps & (FI_SEND | FI_RECV)))
		caps |= FI_SEND | FI_RECV;
	if ((caps & (FI_RMA | FI_ATOMIC)) &&
	    !(caps & (FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE)))
		caps |= FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
	return caps;
}

/* An endpoint's default flags (fnv_ep.c takes them from the fi_info it
 * is opened with): FI_COMPLETION if the hints ask for it, the one default
 * the provider acts on.  An application that binds its completion queue
 * with FI_SELECTIVE_COMPLETION and asks for FI_COMPLETION by default (Open
 * MPI's mtl ofi) would otherwise see no completion of fi_trecv or fi_tsend
 * at all. */
static uint64_t default_op_flags(uint64_t asked)
{
	return asked & FI_COMPLETION;
}

/* The fi_info of /dev/netvm<index>, shaped by the hints it met. */
static struct fi_info *make_info(int index, const struct fi_info *h,
				 const struct fnv_addr *dest,
				 const struct fnv_kind *k)
{
	struct fi_info *fi = fi_allocinfo();
	bool rma = k->rma && prov_keys_ok(h);
	uint64_t caps;
	char name[16];

	if (!fi)
		return NULL;
	snprintf(name, sizeof(name), "netvm%d", index);

	fi->caps = offered_caps(h, k);
	if (h && h->caps)	/* what was asked for, and the secondary ones */
		fi->caps = h->caps | (k->caps & (FI_LOCAL_COMM | FI_REMOTE_COMM));
	caps = implied(fi->caps);
	fi->mode = 0;
	fi->addr_format = FI_FORMAT_UNSPEC;
	fi->tx_attr->caps = caps & (k->tx_caps |
			    (rma ? FI_RMA | FI_ATOMIC | FI_READ | FI_WRITE : 0));
	fi->tx_attr->op_flags = h && h->tx_attr ?
				default_op_flags(h->tx_attr->op_flags) : 0;
	fi->tx_attr->msg_order = k->order;
	fi->tx_attr->comp_order = FI_ORDER_NONE;
	fi->tx_attr->inject_size = k->inject_max;	/* eager sends copy */
	fi->tx_attr->size = k->tx_size;
	fi->tx_attr->iov_limit = FNV_IOV_MAX;
	fi->tx_attr->rma_iov_limit = rma ? 1 : 0;
	fi->rx_attr->caps = caps & (k->rx_caps | (rma ? FI_RMA | FI_ATOMIC |
					  FI_REMOTE_READ | FI_REMOTE_WRITE : 0));
	fi->rx_attr->op_flags = h && h->rx_attr ?
				default_op_flags(h->rx_attr->op_flags) : 0;
	fi->rx_attr->msg_order = k->order;
	fi->rx_attr->comp_order = FI_ORDER_NONE;
	fi->rx_attr->total_buffered_recv = 0;
	fi->rx_attr->size = k->rx_size;
	fi->rx_attr->iov_limit = FNV_IOV_MAX;
	fi->ep_attr->type = k->type;
	fi->ep_attr->protocol = FI_PROTO_UNSPEC;
	fi->ep_attr->protocol_version = 1;
	fi->ep_attr->max_msg_size = k->msg_max;
	/* one field of all 64 bits: a tag is matched whole (fnv_rdm_match.c).
	 * Open MPI's mtl ofi counts the bits it may use from the top bit of
	 * this down: 0 leaves it none */
	fi->ep_attr->mem_tag_format = k->caps & FI_TAGGED ? UINT64_MAX : 0;
	fi->ep_attr->msg_prefix_size = 0;
	fi->ep_attr->tx_ctx_cnt = 1;
	fi->ep_attr->rx_ctx_cnt = 1;
	fi->domain_attr->name = strdup(name);
	fi->domain_attr->threading = FI_THREAD_SAFE;
	fi->domain_attr->control_progress = FI_PROGRESS_MANUAL;
	fi->domain_attr->data_progress = FI_PROGRESS_MANUAL;
	fi->domain_attr->resource_mgmt = FI_RM_ENABLED;
	fi->domain_attr->av_type = h && h->domain_attr ?
				   h->domain_attr->av_type : FI_AV_UNSPEC;
	/* messages need no registration; RMA keys are the provider's */
	fi->domain_attr->mr_mode = rma ? FI_MR_PROV_KEY : 0;
	fi->domain_attr->mr_key_size = sizeof(uint64_t);
	fi->domain_attr->cq_data_size = k->cq_data;
	fi->domain_attr->cq_cnt = 64;
	fi->domain_attr->cntr_cnt = k->type == FI_EP_RDM ? 64 : 0;
	fi->domain_attr->ep_cnt = NVM_UNET_CHANNELS - 1;
	fi->domain_attr->tx_ctx_cnt = NVM_UNET_CHANNELS - 1;
	fi->domain_attr->rx_ctx_cnt = NVM_UNET_CHANNELS - 1;
	fi->domain_attr->max_ep_tx_ctx = 1;
	fi->domain_attr->max_ep_rx_ctx = 1;
	fi->domain_attr->mr_iov_limit = 1;
	fi->domain_attr->caps = FI_LOCAL_COMM | FI_REMOTE_COMM;
	fi->domain_attr->mr_cnt = 1024;
	fi->fabric_attr->name = strdup(FNV_NAME);
	fi->fabric_attr->prov_version = FNV_VERSION;
	fi->fabric_attr->api_version = FNV_API;
	if (dest) {
		fi->dest_addr = malloc(sizeof(*dest));
		if (fi->dest_addr) {
			memcpy(fi->dest_addr, dest, sizeof(*dest));
			fi->dest_addrlen = sizeof(*dest);
		}
	}
	if (!fi->domain_attr->name || !fi->fabric_attr->name ||
	    (dest && !fi->dest_addr)) {
		fi_freeinfo(fi);
		return NULL;
	}
	return fi;
}

int fnv_getinfo(uint32_t version, const char *node, const char *service,
		uint64_t flags, const struct fi_info *hints,
		struct fi_info **info)
{
	struct fi_info *head = NULL, **tail = &head;
	struct fnv_addr dest, *dp = NULL;

	(void)version;
	(void)service;	/* IP services mean nothing here */
	*info = NULL;
	if (node && !(flags & FI_SOURCE)) {
		/* a destination given by name: only our own form */
		if (!fnv_parse_addr(node, &dest))
			return -FI_ENODATA;
		dp = &dest;
	}
	for (int i = 0; i < FNV_DOMAINS; i++) {
		char path[32], name[16];
		struct fi_info *fi;
		const char *why;

		snprintf(path, sizeof(path), "/dev/netvm%d", i);
		snprintf(name, sizeof(name), "netvm%d", i);
		if (access(path, R_OK | W_OK))
			continue;
		for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
			why = hints_refused(hints, name, &kinds[k]);
			if (why) {
				FI_INFO(&fnv_prov, FI_LOG_CORE,
					"%s %s: cannot meet the %s asked for\n",
					name, fi_tostr(&kinds[k].type,
						       FI_TYPE_EP_TYPE), why);
				continue;
			}
			fi = make_info(i, hints, dp, &kinds[k]);
			if (!fi) {
				fi_freeinfo(head);
				return -FI_ENOMEM;
			}
			*tail = fi;
			tail = &fi->next;
		}
	}
	if (!head) {
		FI_INFO(&fnv_prov, FI_LOG_CORE, "no /dev/netvmN that meets the hints\n");
		return -FI_ENODATA;
	}
	*info = head;
	return 0;
}
