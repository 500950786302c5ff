# Copyright (c) Microsoft. All rights reserved.
