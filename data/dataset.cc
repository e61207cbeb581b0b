#include "data/dataset.h"

#include "data/npy_dataset.h"
#include "data/synthetic_dataset.h"
#include "data/text_dataset.h"

namespace softwire {
namespace data {

StatusOr<std::unique_ptr<Dataset>> OpenDataset(const proto::DataSource& source,
                                               const DataRoot& data_root) {
  switch (source.dataset_case()) {
    case proto::DataSource::kNpy: {
      SOFTWIRE_ASSIGN_OR_RETURN(std::unique_ptr<NpyDataset> dataset,
                                NpyDataset::Open(source, data_root));
      return std::unique_ptr<Dataset>(std::move(dataset));
    }
    case proto::DataSource::kSynthetic: {
      SOFTWIRE_ASSIGN_OR_RETURN(std::unique_ptr<SyntheticDataset> dataset,
                                SyntheticDataset::Open(source));
      return std::unique_ptr<Dataset>(std::move(dataset));
    }
    case proto::DataSource::kText: {
      SOFTWIRE_ASSIGN_OR_RETURN(std::unique_ptr<TextDataset> dataset,
                                TextDataset::Open(source, data_root));
      return std::unique_ptr<Dataset>(std::move(dataset));
    }
    case proto::DataSource::DATASET_NOT_SET:
      break;
  }
  return InvalidArgumentError("source '" + source.name() +
                              "': no dataset set (one of npy, synthetic, text)");
}

}  // namespace data
}  // namespace softwire
