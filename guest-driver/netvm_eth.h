/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * netvm.ko: the Ethernet interface nvmN (netvm_eth.c, docs/ethernet.md).
 */
#ifndef NETVM_ETH_H
#define NETVM_ETH_H

#include <linux/types.h>

struct netvm_dev;
struct netvm_eth;

int netvm_eth_init(struct netvm_dev *nd);	/* probe, after the layout */
void netvm_eth_del(struct netvm_dev *nd);	/* remove, NIC still running */
void netvm_eth_free(struct netvm_dev *nd);	/* teardown, NIC halted */
void netvm_eth_event(struct netvm_dev *nd);	/* NVM_EV_ETH, hard IRQ */
void netvm_eth_link(struct netvm_dev *nd);	/* NVM_EV_LINK, hard IRQ */
/* netvm_route.c: a route set (@route, @len) or taken away (@route NULL) */
void netvm_eth_route(struct netvm_dev *nd, u32 node, const u8 *route,
		     u32 len);

#endif
