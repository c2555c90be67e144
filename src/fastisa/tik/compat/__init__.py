"""The CANN op scaffolding TIK operators import, as thin modules (issue 18, item 2).

A TIK operator file of the CANN op library (e.g. caffe-huawei-atlas-convertor
``convertor/huawei/impl/*.py``, gekowa/ascend-opp ``op_impl/built-in/ai_core/tbe/impl``)
imports more than ``te.tik``: ``te.tvm`` (``tvm.const``), ``te.platform`` (``cce_conf``,
``cce_params``, ``fusion_manager``), ``te.utils.op_utils`` / ``tbe.common.utils.para_check``
(parameter checks and their decorator), ``topi.cce.util`` and ``te.lang.cce``.
:mod:`fastisa.shim` maps those vendor names to the modules here:

==============================================  =====================================
vendor module                                   fastisa module
==============================================  =====================================
``te.tvm``                                      :mod:`.tvm`
``te.platform.cce_params``                      :mod:`.cce_params`
``te.platform.fusion_manager``                  :mod:`.fusion_manager`
``te.platform.cce_intrin``, ``cce_build``       :mod:`.cce_misc`
``te.utils.op_utils``, ``tbe.common.utils.para_check``  :mod:`.op_utils`
``te.utils.error_manager[.error_manager_vector]``  :mod:`.error_manager`
``topi.cce.util``                               :mod:`.topi_util`
``te.lang.cce``, ``te.lang.dynamic``, ``topi.generic``  :mod:`.te_lang`
==============================================  =====================================

Only what TIK operators use is here, with the vendor's signatures.  fastisa simulates no
TVM compute: a name with no TIK meaning (``tvm.compute``, ``te.lang.cce.vadd``, ...) exists
so that the import succeeds, and raises ``NotImplementedError`` saying so when used.
"""
