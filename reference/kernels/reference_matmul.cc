// matmul and batch_matmul by the definition: c[m, n] = sum over k of op(a)[m, k] op(b)[k, n].
#include <algorithm>
#include <vector>

#include "reference/kernels/reference_kernel_families.h"
#include "reference/kernels/reference_op_helpers.h"

namespace softwire {
namespace reference {
namespace {

// One product of row-major matrices starting at the given offsets.
struct Product {
  bool transpose_a = false;
  bool transpose_b = false;
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;

  void Multiply(const double* a, const double* b, double* c) const {
    for (int64_t row = 0; row < m; ++row) {
      for (int64_t column = 0; column < n; ++column) {
        double sum = 0;
        for (int64_t inner = 0; inner < k; ++inner) {
          double a_value = transpose_a ? a[inner * m + row] : a[row * k + inner];
          double b_value = transpose_b ? b[column * k + inner] : b[inner * n + column];
          sum += a_value * b_value;
        }
        c[row * n + column] = sum;
      }
    }
  }
};

Status ReadTransposes(const ReferenceKernelCall& call, Product* product,
                      std::vector<int64_t>* a_perm = nullptr,
                      std::vector<int64_t>* b_perm = nullptr) {
  KernelAttributes attributes(*call.def);
  product->transpose_a = attributes.Bool("transpose_a", false);
  product->transpose_b = attributes.Bool("transpose_b", false);
  if (a_perm != nullptr) *a_perm = attributes.Ints("a_perm", {});
  if (b_perm != nullptr) *b_perm = attributes.Ints("b_perm", {});
  SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
  return CheckArity(call, 2, 1);
}

// batch_matmul's strided view (`a_perm`, `b_perm`, docs/OPS.md): the input of shape `logical`
// is transpose(x, perm) of the row-major tensor x whose values `stored` holds; returns the
// input's values in its own row-major order. Empty perm: `stored` as it is.
StatusOr<std::vector<double>> ReadStrided(const ReferenceKernelCall& call,
                                          const std::vector<double>& stored, const Shape& logical,
                                          const std::vector<int64_t>& perm) {
  if (perm.empty()) return stored;
  const int rank = logical.rank();
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  bool valid = static_cast<int>(perm.size()) == rank && perm.back() == rank - 1;
  for (int axis = 0; valid && axis < rank; ++axis) valid = sorted[axis] == axis;
  if (!valid) return OpError(call, "a strided view's perm keeps the last axis last");
  std::vector<int64_t> extents(rank);
  for (int axis = 0; axis < rank; ++axis) extents[perm[axis]] = logical.dim(axis);
  std::vector<int64_t> strides(rank, 1);
  for (int axis = rank - 2; axis >= 0; --axis)
    strides[axis] = strides[axis + 1] * extents[axis + 1];
  std::vector<double> values(stored.size());
  for (int64_t index = 0; index < logical.NumElements(); ++index) {
    int64_t rest = index;
    int64_t offset = 0;
    for (int axis = rank - 1; axis >= 0; --axis) {
      offset += (rest % logical.dim(axis)) * strides[perm[axis]];
      rest /= logical.dim(axis);
    }
    values[static_cast<size_t>(index)] = stored[static_cast<size_t>(offset)];
  }
  return values;
}

Status Matmul(const ReferenceKernelCall& call) {
  Product product;
  SOFTWIRE_RETURN_IF_ERROR(ReadTransposes(call, &product));
  const Shape& a = Input(call, 0).shape;
  const Shape& b = Input(call, 1).shape;
  if (b.rank() != 2 || a.rank() < 1 || (product.transpose_a && a.rank() != 2)) {
    return OpError(call, "bad ranks: a " + a.ToString() + ", b " + b.ToString());
  }
  product.k = product.transpose_a ? a.dim(0) : a.dim(-1);
  product.m = product.transpose_a ? a.dim(1) : a.NumElements(0, a.rank() - 1);
  product.n = product.transpose_b ? b.dim(0) : b.dim(1);
  if ((product.transpose_b ? b.dim(1) : b.dim(0)) != product.k) {
    return OpError(call, "inner extents of " + a.ToString() + " and " + b.ToString() + " differ");
  }
  std::vector<int64_t> c_dims;
  if (product.transpose_a) {
    c_dims = {product.m, product.n};
  } else {
    c_dims = LeadingShape(a).dims();
    c_dims.push_back(product.n);
  }
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 0, Shape(c_dims)));
  product.Multiply(Input(call, 0).values.data(), Input(call, 1).values.data(),
                   Output(call, 0).values.data());
  return Status::Ok();
}

Status BatchMatmul(const ReferenceKernelCall& call) {
  Product product;
  std::vector<int64_t> a_perm;
  std::vector<int64_t> b_perm;
  SOFTWIRE_RETURN_IF_ERROR(ReadTransposes(call, &product, &a_perm, &b_perm));
  const Shape& a = Input(call, 0).shape;
  const Shape& b = Input(call, 1).shape;
  if (a.rank() < 2 || a.rank() != b.rank()) {
    return OpError(call, "bad ranks: a " + a.ToString() + ", b " + b.ToString());
  }
  const int batch_rank = a.rank() - 2;
  for (int axis = 0; axis < batch_rank; ++axis) {
    if (a.dim(axis) != b.dim(axis)) return OpError(call, "batch axes differ");
  }
  product.m = product.transpose_a ? a.dim(-1) : a.dim(-2);
  product.k = product.transpose_a ? a.dim(-2) : a.dim(-1);
  product.n = product.transpose_b ? b.dim(-2) : b.dim(-1);
  if ((product.transpose_b ? b.dim(-1) : b.dim(-2)) != product.k) {
    return OpError(call, "inner extents of " + a.ToString() + " and " + b.ToString() + " differ");
  }
  std::vector<int64_t> c_dims(a.dims().begin(), a.dims().begin() + batch_rank);
  c_dims.push_back(product.m);
  c_dims.push_back(product.n);
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 0, Shape(c_dims)));
  SOFTWIRE_ASSIGN_OR_RETURN(std::vector<double> a_values,
                            ReadStrided(call, Input(call, 0).values, a, a_perm));
  SOFTWIRE_ASSIGN_OR_RETURN(std::vector<double> b_values,
                            ReadStrided(call, Input(call, 1).values, b, b_perm));
  const int64_t batch = a.NumElements(0, batch_rank);
  for (int64_t index = 0; index < batch; ++index) {
    product.Multiply(a_values.data() + index * product.m * product.k,
                     b_values.data() + index * product.k * product.n,
                     Output(call, 0).values.data() + index * product.m * product.n);
  }
  return Status::Ok();
}

}  // namespace

void RegisterReferenceMatmulKernels(ReferenceKernelTable* table) {
  table->Register("matmul", Matmul);
  table->Register("batch_matmul", BatchMatmul);
}

}  // namespace reference
}  // namespace softwire
