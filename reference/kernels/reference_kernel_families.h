// Registration functions of the reference kernel families, one per source file.
// MakeReferenceKernels (reference_kernels.cc) calls them all.
#ifndef SOFTWIRE_REFERENCE_KERNELS_REFERENCE_KERNEL_FAMILIES_H_
#define SOFTWIRE_REFERENCE_KERNELS_REFERENCE_KERNEL_FAMILIES_H_

#include "reference/kernels/reference_kernels.h"

namespace softwire {
namespace reference {

void RegisterReferenceMatmulKernels(ReferenceKernelTable* table);  // matmul, batch_matmul
void RegisterReferenceElementwiseKernels(
    ReferenceKernelTable* table);  // add, sub, mul, scale,
                                   // identity, reshape, fill, add_n, relu(_grad), gelu(_grad),
                                   // bias_add(_grad), broadcast_axes
void RegisterReferenceSoftmaxKernels(
    ReferenceKernelTable* table);  // softmax(_grad),
                                   // softmax_cross_entropy(_grad), accuracy
void RegisterReferenceLayerNormKernels(ReferenceKernelTable* table);  // layer_norm(_grad)
void RegisterReferenceReductionKernels(ReferenceKernelTable* table);  // reduce_sum,
                                                                      // reduce_mean, sum_to_shape
void RegisterReferenceGatherKernels(ReferenceKernelTable* table);     // transpose, embedding,
                                                                      // embedding_grad
void RegisterReferenceOptimizerKernels(ReferenceKernelTable* table);  // sgd_update,
                                                                      // adam_update
void RegisterReferenceTransferKernels(ReferenceKernelTable* table);   // copy, slice,
                                                                      // assemble, flat_split,
                                                                      // flat_concat
void RegisterReferenceCastKernel(ReferenceKernelTable* table);        // cast
// fused: its statements through the kernels registered before it, so register it last.
void RegisterReferenceFusedKernel(ReferenceKernelTable* table);
void RegisterReferenceConvolutionKernels(ReferenceKernelTable* table);  // conv2d(_grad_input,
                                                                        // _grad_filter)
void RegisterReferencePoolingKernels(ReferenceKernelTable* table);      // max/avg_pool2d(_grad),
                                                                        // global_avg_pool(_grad),
                                                                        // flatten
void RegisterReferenceBatchNormKernels(ReferenceKernelTable* table);    // batch_norm(_grad)

}  // namespace reference
}  // namespace softwire

#endif  // SOFTWIRE_REFERENCE_KERNELS_REFERENCE_KERNEL_FAMILIES_H_
