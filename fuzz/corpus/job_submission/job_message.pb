+
tiny
data
x
train/x.npy08