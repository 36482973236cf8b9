// SPDX-License-Identifier: GPL-2.0-only
/*
 * netvm.ko: mmap of a port's three regions (SRAM window, doorbell page,
 * host block), for NetVM endpoints here and U-Net endpoints
 * (netvm_unet.c).  Nothing is inherited across fork.
 */
#include <linux/dma-mapping.h>
#include <linux/io.h>
#include <linux/mm.h>

#include "netvm_drv.h"
#include "netvm_compat.h"
#include "netvm_ep_priv.h"

/*
 * Map one of a port's three regions, chosen by the offset (the same for
 * NetVM and U-Net endpoints): its SRAM window, its doorbell page, or its
 * host block (@host_size bytes of coherent memory at @host).  The caller
 * has checked that the mapping is the port owner's.
 */
int netvm_mmap_port(struct netvm_dev *nd, struct vm_area_struct *vma,
		    u32 port, void *host, dma_addr_t host_dma, size_t host_size)
{
	unsigned long off = vma->vm_pgoff << PAGE_SHIFT;
	unsigned long size = vma->vm_end - vma->vm_start;
	phys_addr_t pa;

	netvm_vm_flags_set(vma, VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP);
	switch (off) {
	case NETVM_EP_MMAP_SRAM:
		if (size > NVM_EP_STRIDE)
			return -EINVAL;
		pa = pci_resource_start(nd->pdev, LANAI_BAR_SRAM) +
		     nd->layout.ep_base + port * NVM_EP_STRIDE;
		break;
	case NETVM_EP_MMAP_DB:
		if (size > LANAI_DOORBELL_PAGE)
			return -EINVAL;
		pa = pci_resource_start(nd->pdev, LANAI_BAR_DOORBELL) +
		     port * LANAI_DOORBELL_PAGE;
		break;
	case NETVM_EP_MMAP_HOST:
		if (size > PAGE_ALIGN(host_size))
			return -EINVAL;
		vma->vm_pgoff = 0;
		return dma_mmap_coherent(&nd->pdev->dev, vma, host, host_dma,
					 host_size);
	default:
		return -EINVAL;
	}
	vma->vm_page_prot = pgprot_noncached(vma->vm_page_prot);
	return io_remap_pfn_range(vma, vma->vm_start, pa >> PAGE_SHIFT, size,
				  vma->vm_page_prot);
}

/*
 * mmap: only the endpoint's own SRAM region, doorbell page and host
 * areas, each from its start; nothing is inherited across fork.
 */
int netvm_ep_mmap(struct netvm_file *nf, struct vm_area_struct *vma)
{
	struct netvm_ep *ep;
	struct netvm_dev *nd = nf->nd;
	int ret;

	mutex_lock(&nf->lock);
	ep = nf->ep;
	if (!ep) {
		ret = -ENXIO;
		goto out;
	}
	if (ep->mm != current->mm || READ_ONCE(nd->dead)) {
		ret = -EACCES;
		goto out;
	}
	ret = netvm_mmap_port(nd, vma, ep->port, ep->host, ep->host_dma,
			      NETVM_EP_HOST_SIZE);
out:
	mutex_unlock(&nf->lock);
	return ret;
}
