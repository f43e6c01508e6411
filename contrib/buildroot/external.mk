include $(sort $(wildcard $(BR2_EXTERNAL_FAIRSEM_PATH)/package/*/*.mk))
