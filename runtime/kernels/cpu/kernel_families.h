// Registration functions of the cpu kernel families, one per source file. RegisterCpuKernels
// (cpu_kernels.cc) calls them all; nothing else should.
#ifndef SOFTWIRE_RUNTIME_KERNELS_CPU_KERNEL_FAMILIES_H_
#define SOFTWIRE_RUNTIME_KERNELS_CPU_KERNEL_FAMILIES_H_

#include "runtime/kernels/kernel.h"

namespace softwire {
namespace runtime {

void RegisterMatmulKernels(KernelRegistry* registry);        // matmul, batch_matmul
void RegisterBroadcastKernels(KernelRegistry* registry);     // add, sub, mul, broadcast_axes
void RegisterElementwiseKernels(KernelRegistry* registry);   // scale, identity, reshape, fill,
                                                             // add_n
void RegisterActivationKernels(KernelRegistry* registry);    // relu, gelu and their grads
void RegisterBiasKernels(KernelRegistry* registry);          // bias_add, bias_add_grad
void RegisterSoftmaxKernels(KernelRegistry* registry);       // softmax, softmax_grad
void RegisterCrossEntropyKernels(KernelRegistry* registry);  // softmax_cross_entropy(_grad),
                                                             // accuracy
void RegisterLayerNormKernels(KernelRegistry* registry);     // layer_norm, layer_norm_grad
void RegisterReductionKernels(KernelRegistry* registry);     // reduce_sum, reduce_mean,
                                                             // sum_to_shape
void RegisterTransposeKernel(KernelRegistry* registry);      // transpose
void RegisterEmbeddingKernels(KernelRegistry* registry);     // embedding, embedding_grad
void RegisterOptimizerKernels(KernelRegistry* registry);     // sgd_update, adam_update
void RegisterSourceKernel(KernelRegistry* registry);         // source
void RegisterVariableKernel(KernelRegistry* registry);       // variable
void RegisterAccumulateKernel(KernelRegistry* registry);     // accumulate
void RegisterSinkKernel(KernelRegistry* registry);           // sink
void RegisterTransferKernels(KernelRegistry* registry);      // copy, slice, assemble,
                                                             // flat_split, flat_concat
void RegisterCastKernel(KernelRegistry* registry);           // cast
void RegisterFusedKernel(KernelRegistry* registry);          // fused
void RegisterConvolutionKernels(KernelRegistry* registry);   // conv2d, conv2d_grad_input,
                                                             // conv2d_grad_filter
void RegisterPoolingKernels(KernelRegistry* registry);       // max/avg_pool2d(_grad),
                                                             // global_avg_pool(_grad), flatten
void RegisterReorderKernel(KernelRegistry* registry);        // reorder
void RegisterBatchNormKernels(KernelRegistry* registry);     // batch_norm(_grad, _statistics),
                                                             // running_average_update

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_KERNELS_CPU_KERNEL_FAMILIES_H_
