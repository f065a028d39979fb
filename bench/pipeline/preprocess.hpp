// Preprocessing, the step between a decoded image and the network's input: bilinear resize to the
// network's H x W, scale to [0, 1], normalise per channel ((x - mean) / std), pack NCHW.
#pragma once

#include <span>
#include <vector>

#include "bench/pipeline/image.hpp"
#include "kernels/common/tensor.hpp"

namespace convlab {

struct Normalisation {
  std::vector<float> mean, std;  // one per channel, on the [0, 1] scale
};

// The constants a model's inputs are normalised with: torchvision's ImageNet mean and std for
// 3-channel models (lab-cnn, resnet8, mobilenet-tiny: what a model trained on natural images
// expects), MNIST's for 1-channel ones (lenet5). Other channel counts: mean 0.5, std 0.5.
Normalisation normalisation_for(int channels);

// One image into one batch item of `item` (c x h x w, NCHW): `out` holds item.c() * h * w floats.
// Bilinear with half-pixel centres (PyTorch's align_corners=False, OpenCV's INTER_LINEAR), no
// antialiasing: downscaling 640x480 to 32x32 samples rather than averages, as those do. The image
// must have item.c() channels (decode_image converts).
void preprocess(const Image& image, const Shape& item, const Normalisation& norm, std::span<float> out);

// Every image of `images` decoded and preprocessed, one batch item each, in order (calibration on
// real images: `convlab quantize --images`).
std::vector<float> preprocess_all(const ImageSet& images, const Shape& item);

}  // namespace convlab
