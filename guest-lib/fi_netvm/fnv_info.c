// SPDX-License-Identifier: MIT
/*
 * What the provider offers (one fi_info per /dev/netvmN), and whether it
 * meets an application's hints.  The capability list is exactly what
 * fnv_ep.c and fnv_msg.c do: docs/libfabric.md has the matrix.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fnv.h"

#define FNV_CAPS	(FI_MSG | FI_SEND | FI_RECV | FI_SOURCE | \
			 FI_LOCAL_COMM | FI_REMOTE_COMM)

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

/* NULL if the hints can be met, else what cannot (for FI_LOG_LEVEL=info). */
static const char *hints_refused(const struct fi_info *h, const char *dom_name)
{
	if (!h)
		return NULL;
	if (h->caps & ~FNV_CAPS)
		return "capabilities";
	if (h->addr_format != FI_FORMAT_UNSPEC)
		return "address format";
	if (h->ep_attr && h->ep_attr->type != FI_EP_UNSPEC &&
	    h->ep_attr->type != FI_EP_DGRAM)
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
		if (d->cq_data_size)
			return "remote CQ data";
	}
	if (h->tx_attr && ((h->tx_attr->caps & ~FNV_CAPS) ||
			   h->tx_attr->msg_order || h->tx_attr->comp_order ||
			   h->tx_attr->inject_size > FNV_MSG_MAX ||
			   h->tx_attr->iov_limit > FNV_IOV_MAX))
		return "transmit attributes";
	if (h->rx_attr && ((h->rx_attr->caps & ~FNV_CAPS) ||
			   h->rx_attr->msg_order || h->rx_attr->comp_order ||
			   h->rx_attr->iov_limit > FNV_IOV_MAX))
		return "receive attributes";
	return NULL;
}

/* The fi_info of /dev/netvm<index>, shaped by the hints it met. */
static struct fi_info *make_info(int index, const struct fi_info *h,
				 const struct fnv_addr *dest)
{
	struct fi_info *fi = fi_allocinfo();
	char name[16];

	if (!fi)
		return NULL;
	snprintf(name, sizeof(name), "netvm%d", index);
	fi->caps = FNV_CAPS;
	if (h && h->caps)	/* what was asked for, and the secondary ones */
		fi->caps = h->caps | (FNV_CAPS & (FI_LOCAL_COMM | FI_REMOTE_COMM));
	fi->mode = 0;
	fi->addr_format = FI_FORMAT_UNSPEC;
	fi->tx_attr->caps = FI_MSG | FI_SEND;
	fi->tx_attr->op_flags = 0;
	fi->tx_attr->msg_order = FI_ORDER_NONE;
	fi->tx_attr->comp_order = FI_ORDER_NONE;
	fi->tx_attr->inject_size = FNV_MSG_MAX;	/* sends copy at once */
	fi->tx_attr->size = FNV_TX_SIZE;
	fi->tx_attr->iov_limit = FNV_IOV_MAX;
	fi->tx_attr->rma_iov_limit = 0;
	fi->rx_attr->caps = FI_MSG | FI_RECV | FI_SOURCE;
	fi->rx_attr->op_flags = 0;
	fi->rx_attr->msg_order = FI_ORDER_NONE;
	fi->rx_attr->comp_order = FI_ORDER_NONE;
	fi->rx_attr->total_buffered_recv = 0;
	fi->rx_attr->size = FNV_RX_SIZE;
	fi->rx_attr->iov_limit = FNV_IOV_MAX;
	fi->ep_attr->type = FI_EP_DGRAM;
	fi->ep_attr->protocol = FI_PROTO_UNSPEC;
	fi->ep_attr->protocol_version = 1;
	fi->ep_attr->max_msg_size = FNV_MSG_MAX;
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
	fi->domain_attr->mr_mode = 0;	/* messages need no registration */
	fi->domain_attr->mr_key_size = sizeof(uint64_t);
	fi->domain_attr->cq_data_size = 0;
	fi->domain_attr->cq_cnt = 64;
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
		why = hints_refused(hints, name);
		if (why) {
			FI_INFO(&fnv_prov, FI_LOG_CORE, "%s: cannot meet the %s asked for\n",
				name, why);
			continue;
		}
		fi = make_info(i, hints, dp);
		if (!fi) {
			fi_freeinfo(head);
			return -FI_ENOMEM;
		}
		*tail = fi;
		tail = &fi->next;
	}
	if (!head) {
		FI_INFO(&fnv_prov, FI_LOG_CORE, "no /dev/netvmN that meets the hints\n");
		return -FI_ENODATA;
	}
	*info = head;
	return 0;
}
