# Blog package.
